/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* biopattern's counters per disk, shared by its BPF program and user space (installed for
 * embedders as <tpkit/tools/biopattern.h>). The key is the disk's dev_t (__u32). */
#ifndef TPKIT_BIOPATTERN_H
#define TPKIT_BIOPATTERN_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif

struct biopattern_counts {
	__u64 sequential; /* completions that began where the disk's previous one ended */
	__u64 random;     /* the others */
	__u64 bytes;
};

#endif
