/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The current task as streaming tools' events begin with it (tpkit_fill_task_header in
 * task.bpf.h), shared by BPF programs and user space. Plain C, largest fields first. */
#ifndef TPKIT_TASK_H
#define TPKIT_TASK_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include "tpkit/limits.h"

struct tpkit_task_header {
	__u64 timestamp_ns; /* bpf_ktime_get_ns(), CLOCK_MONOTONIC */
	__u32 pid;          /* tgid */
	__u32 tid;
	__u32 cpu;
	__u32 uid;
	char comm[TPKIT_COMM_LEN];
};

/* What a tool's per-task histograms are split by (task_hists.bpf.h's rodata tpkit_hist_split):
 * bcc's -P, -L and --pidnss. */
#define TPKIT_SPLIT_NONE 0          /* one histogram */
#define TPKIT_SPLIT_PROCESS 1       /* per process */
#define TPKIT_SPLIT_THREAD 2        /* per thread */
#define TPKIT_SPLIT_PID_NAMESPACE 3 /* per PID namespace */

/* A split histogram's key: the process ID (with its main thread's comm), the thread ID (with its
 * comm), or the PID namespace's inode number (comm all zero). */
struct tpkit_task_key {
	__u32 id;
	char comm[TPKIT_COMM_LEN];
};

#endif
