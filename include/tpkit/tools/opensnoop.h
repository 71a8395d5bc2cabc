/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* opensnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/opensnoop.h>): largest fields first, then the path (and with -F the names of the
 * directory it starts from), packed. */
#ifndef TPKIT_OPENSNOOP_H
#define TPKIT_OPENSNOOP_H

#include <tpkit/task.h>

enum opensnoop_call {
	OPENSNOOP_OPEN = 1,
	OPENSNOOP_OPENAT,
	OPENSNOOP_OPENAT2,
};

/* A path with its NUL, as long as the kernel takes one (PATH_MAX). */
#define OPENSNOOP_PATH_MAX 4096
/* -F: one name of a directory with its NUL (NAME_MAX + 1), the room for all of them, and how
 * many steps up (names and mount crossings) are taken at most. */
#define OPENSNOOP_NAME_MAX 256
#define OPENSNOOP_DIR_ROOM 8192
#define OPENSNOOP_DIR_STEPS 128

struct opensnoop_event {
	struct tpkit_task_header task;
	__u64 flags;     /* O_* (openat2: open_how.flags) */
	__u64 mode;      /* the mode passed, whether or not the flags use it */
	__s32 ret;       /* the file descriptor, or -errno */
	__s32 dfd;       /* the directory a relative path starts from (open: AT_FDCWD) */
	__u32 call;      /* enum opensnoop_call */
	__u32 path_cut;  /* 1: the path is longer than the event holds */
	__u32 path_size; /* with its NUL; 0 when it could not be read */
	/* -F, a relative path: the names of the directory it starts from (the working directory,
	 * or dfd's), innermost first, after the path; dir_cut: the outermost names are missing
	 * (deeper than the event holds, or unreadable). */
	__u32 dir_names;
	__u32 dir_size;
	__u32 dir_cut;
	/* The path, then the directory's names. Only path_size + dir_size bytes are sent. */
	char strings[OPENSNOOP_PATH_MAX + OPENSNOOP_DIR_ROOM];
};

#endif
