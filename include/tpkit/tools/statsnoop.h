/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* statsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/statsnoop.h>): largest fields first, then the path. */
#ifndef TPKIT_STATSNOOP_H
#define TPKIT_STATSNOOP_H

#include <tpkit/task.h>

enum statsnoop_call {
	STATSNOOP_STATFS = 1,
	STATSNOOP_NEWSTAT,
	STATSNOOP_STATX,
	STATSNOOP_NEWFSTATAT,
	STATSNOOP_NEWLSTAT,
};

/* A path with its NUL, as long as the kernel takes one (PATH_MAX). */
#define STATSNOOP_PATH_MAX 4096

struct statsnoop_event {
	struct tpkit_task_header task;
	__s32 ret;       /* 0, or -errno */
	__s32 dfd;       /* statx, newfstatat: the directory a relative path starts from; else AT_FDCWD */
	__u32 flags;     /* statx, newfstatat: AT_* flags; else 0 */
	__u32 call;      /* enum statsnoop_call */
	__u32 path_cut;  /* 1: the path is longer than the event holds */
	__u32 path_size; /* with its NUL; 0 when it could not be read. Only this much of path is sent */
	char path[STATSNOOP_PATH_MAX];
};

#endif
