/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* exitsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/exitsnoop.h>): largest fields first. */
#ifndef TPKIT_EXITSNOOP_H
#define TPKIT_EXITSNOOP_H

#include <tpkit/task.h>

struct exitsnoop_event {
	/* The exiting thread; timestamp_ns is the exit. comm is the process's (its leader's), or
	 * the thread's own with --threaded. */
	struct tpkit_task_header task;
	__u64 start_ns; /* the process's start (the thread's with --threaded), CLOCK_MONOTONIC */
	__u32 ppid;
	__u32 status;   /* as wait(2) gives it: code << 8, or the signal | 0x80 when core dumped */
};

#endif
