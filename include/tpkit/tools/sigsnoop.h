/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* sigsnoop's (and killsnoop's) event, shared by its BPF program and user space (installed for
 * embedders as <tpkit/tools/sigsnoop.h>): largest fields first. */
#ifndef TPKIT_SIGSNOOP_H
#define TPKIT_SIGSNOOP_H

#include <tpkit/task.h>

/* Which call sent the signal (-k), or none: signal:signal_generate saw it. */
enum sigsnoop_call {
	SIGSNOOP_GENERATED = 0,
	SIGSNOOP_KILL = 1,
	SIGSNOOP_TKILL = 2,
	SIGSNOOP_TGKILL = 3,
};

struct sigsnoop_event {
	struct tpkit_task_header task; /* the sender: the task current when it was sent */
	__s32 sig;
	__s32 target_pid; /* the thread it went to; with -k the call's pid argument (≤ 0: a group) */
	/* With -k the call's return value (0 or -errno); else what the kernel did with it: its
	 * TRACE_SIGNAL_* (0 delivered, 1 ignored, 2 already pending, 3 queue full, 4 delivered
	 * without its siginfo). */
	__s32 result;
	__u32 call; /* enum sigsnoop_call */
	char target_comm[TPKIT_COMM_LEN]; /* empty when no signal reached a task (-k) */
};

#endif
