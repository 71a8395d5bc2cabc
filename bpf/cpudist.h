/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* cpudist's histogram key, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/cpudist.h>). */
#ifndef TPKIT_CPUDIST_H
#define TPKIT_CPUDIST_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/limits.h>

/* What the histograms are split by (rodata key_by). */
#define CPUDIST_ALL 0 /* one histogram */
#define CPUDIST_PID 1 /* -P: per process */
#define CPUDIST_TID 2 /* -L: per thread */

/* Zero with CPUDIST_ALL. Else the process ID with its main thread's comm, or the thread ID with
 * its comm. */
struct cpudist_key {
	__u32 id;
	char comm[TPKIT_COMM_LEN];
};

#endif
