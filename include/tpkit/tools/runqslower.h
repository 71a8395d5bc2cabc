/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* runqslower's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/runqslower.h>): largest fields first. */
#ifndef TPKIT_RUNQSLOWER_H
#define TPKIT_RUNQSLOWER_H

#include <tpkit/task.h>

struct runqslower_event {
	/* The task that waited, as it was switched in (timestamp_ns: then). */
	struct tpkit_task_header task;
	__u64 latency_ns; /* from runnable to running */
	/* The task switched out for it. */
	__u32 prev_pid;
	__u32 prev_tid;
	char prev_comm[TPKIT_COMM_LEN];
};

#endif
