/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* capable's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/capable.h>): largest fields first, no holes. */
#ifndef TPKIT_CAPABLE_H
#define TPKIT_CAPABLE_H

#include <tpkit/task.h>

/* --unique: what a capability check is shown once for. */
enum capable_unique {
	CAPABLE_UNIQUE_OFF = 0,
	CAPABLE_UNIQUE_PID = 1,
	CAPABLE_UNIQUE_CGROUP = 2,
};

struct capable_event {
	struct tpkit_task_header task; /* the task whose capability is checked: current */
	__u32 user_ns;  /* inode number of the user namespace the resource belongs to */
	__s32 cap;
	__s32 ret;      /* 0: allowed; -EPERM: denied */
	__u32 reserved;
};

#endif
