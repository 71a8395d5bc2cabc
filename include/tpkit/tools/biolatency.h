/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* biolatency's histogram key, shared by its BPF program and user space (installed for embedders
 * as <tpkit/tools/biolatency.h>). */
#ifndef TPKIT_BIOLATENCY_H
#define TPKIT_BIOLATENCY_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif

/* All zero but for what the histograms are split by: dev with -D (the disk's dev_t), op and
 * flags with -F (TPKIT_REQ_OP_*, TPKIT_REQ_* of <tpkit/block.h>). */
struct biolatency_key {
	__u32 dev;
	__u32 op;
	__u32 flags;
};

#endif
