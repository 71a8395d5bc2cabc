/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* runqlat's histogram key, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/runqlat.h>). */
#ifndef TPKIT_RUNQLAT_H
#define TPKIT_RUNQLAT_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/limits.h>

/* What the histograms are split by (rodata key_by). */
#define RUNQLAT_ALL 0   /* one histogram */
#define RUNQLAT_PID 1   /* -P: per process */
#define RUNQLAT_TID 2   /* -L: per thread */
#define RUNQLAT_PIDNS 3 /* --pidnss: per PID namespace */

/* Zero with RUNQLAT_ALL. Else the process ID (with its main thread's comm), the thread ID (with
 * its comm), or the PID namespace's inode number (comm all zero). */
struct runqlat_key {
	__u32 id;
	char comm[TPKIT_COMM_LEN];
};

#endif
