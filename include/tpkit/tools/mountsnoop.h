/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* mountsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/mountsnoop.h>): largest fields first, then the call's strings, packed. */
#ifndef TPKIT_MOUNTSNOOP_H
#define TPKIT_MOUNTSNOOP_H

#include <tpkit/task.h>

/* The calls traced. */
enum mountsnoop_op {
	MOUNTSNOOP_MOUNT = 1,
	MOUNTSNOOP_UMOUNT,
	MOUNTSNOOP_FSOPEN,
	MOUNTSNOOP_FSCONFIG,
	MOUNTSNOOP_FSMOUNT,
	MOUNTSNOOP_MOVE_MOUNT,
};

/* A call takes at most four strings (mount: source, target, fstype, data), each at most a path
 * (PATH_MAX with its NUL; the kernel refuses longer paths, and copies at most a page of data). */
#define MOUNTSNOOP_STRINGS 4
#define MOUNTSNOOP_STRING_MAX 4096

struct mountsnoop_event {
	struct tpkit_task_header task;
	__u64 latency_ns; /* from the call's entry to its return */
	__u64 flags;      /* mount, umount, fsopen, fsmount, move_mount: their flags */
	__u64 attr_flags; /* fsmount */
	__s64 ret;        /* the call's return value: 0, a file descriptor, or -errno */
	__u32 mnt_ns;     /* the caller's mount namespace (inode number), at the return */
	__u32 op;         /* enum mountsnoop_op */
	__s32 fd;         /* fsconfig: fd; fsmount: fs_fd; move_mount: from_dfd */
	__s32 to_fd;      /* move_mount: to_dfd */
	__u32 cmd;        /* fsconfig */
	__s32 aux;        /* fsconfig */
	__u32 strings_cut; /* bit i: string i is longer than `strings` holds (cut) */
	__u32 reserved;
	/* The call's strings in argument order (mount: source, target, fstype, data; umount:
	 * target; fsopen: fstype; fsconfig: key, value; move_mount: from, to), one after another in
	 * `strings`: each one's length with its NUL; 0 for a NULL pointer, -errno when it could not
	 * be read. Only the used part of `strings` is sent. */
	__s32 string_len[MOUNTSNOOP_STRINGS];
	char strings[MOUNTSNOOP_STRINGS * MOUNTSNOOP_STRING_MAX];
};

#endif
