/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* threadsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/threadsnoop.h>): largest fields first. */
#ifndef TPKIT_THREADSNOOP_H
#define TPKIT_THREADSNOOP_H

#include <tpkit/task.h>

struct threadsnoop_event {
	struct tpkit_task_header task; /* the creating thread */
	__u32 new_tid;                 /* the new thread's ID; its process is the creator's */
	__u32 reserved;
};

#endif
