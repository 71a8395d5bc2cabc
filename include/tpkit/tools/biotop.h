/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* biotop's key and counters, shared by its BPF program and user space (installed for embedders
 * as <tpkit/tools/biotop.h>). */
#ifndef TPKIT_BIOTOP_H
#define TPKIT_BIOTOP_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/limits.h>

/* The task that submitted the I/O, the disk, and the direction. */
struct biotop_key {
	__u32 pid;
	__u32 dev;   /* the disk's dev_t */
	__u32 write; /* 1 for writes, else 0 (reads and the rest, as bcc's biotop) */
	char comm[TPKIT_COMM_LEN];
};

struct biotop_counts {
	__u64 bytes; /* completed */
	__u64 ns;    /* from issue to completion, summed */
	__u64 io;    /* requests completed */
};

#endif
