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

#endif
