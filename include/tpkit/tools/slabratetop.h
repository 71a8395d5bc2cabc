/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* slabratetop's key and counters, shared by its BPF program and user space (installed for
 * embedders as <tpkit/tools/slabratetop.h>). */
#ifndef TPKIT_SLABRATETOP_H
#define TPKIT_SLABRATETOP_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif

/* A cache's name as bcc keeps it: 31 characters and a NUL (the kernel's are shorter). */
#define SLABRATETOP_NAME_LEN 32

struct slabratetop_key {
	char name[SLABRATETOP_NAME_LEN];
};

struct slabratetop_counts {
	__u64 allocs; /* objects handed out */
	__u64 bytes;  /* their slot size in the cache (the cache's size: object, alignment, metadata) */
};

#endif
