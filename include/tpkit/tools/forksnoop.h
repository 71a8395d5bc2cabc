/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* forksnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/forksnoop.h>): largest fields first. */
#ifndef TPKIT_FORKSNOOP_H
#define TPKIT_FORKSNOOP_H

#include <tpkit/task.h>

struct forksnoop_event {
	struct tpkit_task_header parent; /* the forking task */
	__u32 child_pid;                 /* tgid */
	__u32 child_tid;
	__u32 is_thread;
	__u32 reserved;
	char child_comm[TPKIT_COMM_LEN];
};

#endif
