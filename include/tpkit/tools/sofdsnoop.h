/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* sofdsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/sofdsnoop.h>): one message of sendmsg, recvmsg, sendmmsg or recvmmsg whose control
 * data holds SCM_RIGHTS, with the descriptors it passed and their files' names. Largest fields
 * first, then the names, packed. */
#ifndef TPKIT_SOFDSNOOP_H
#define TPKIT_SOFDSNOOP_H

#include <tpkit/task.h>

enum sofdsnoop_call {
	SOFDSNOOP_SENDMSG = 1,
	SOFDSNOOP_RECVMSG,
	SOFDSNOOP_SENDMMSG,
	SOFDSNOOP_RECVMMSG,
};

/* Descriptors of one message the event holds (the kernel passes up to SCM_MAX_FD, 253): the rest
 * are counted in fd_count, not read. A power of two. */
#define SOFDSNOOP_MAX_FDS 16
/* Control messages (struct cmsghdr) read per message; more: cmsgs_cut. */
#define SOFDSNOOP_MAX_CMSGS 8
/* sendmmsg/recvmmsg: messages read per call; more: one event with MMSG_CUT. */
#define SOFDSNOOP_MAX_MMSGS 64
/* One name of a path with its NUL (NAME_MAX + 1), the room for all the event's names, and the
 * steps up (names and mount crossings) taken for each descriptor. */
#define SOFDSNOOP_NAME_MAX 256
#define SOFDSNOOP_NAME_ROOM 8192
#define SOFDSNOOP_WALK_STEPS 64

/* What could not be read (the event's fault). */
#define SOFDSNOOP_FAULT_MSGHDR 1  /* the struct msghdr (mmsghdr) in user memory */
#define SOFDSNOOP_FAULT_CONTROL 2 /* a control message header or its descriptors */
#define SOFDSNOOP_MMSG_CUT 4      /* sendmmsg/recvmmsg: messages past SOFDSNOOP_MAX_MMSGS */

/* A descriptor's file, in the calling task's table when the call returned. */
#define SOFDSNOOP_FILE_OPEN 1     /* the descriptor was open (else nothing below was read) */
#define SOFDSNOOP_FILE_CUT 2      /* the outermost names are missing (deeper than the room) */
#define SOFDSNOOP_FILE_DETACHED 4 /* no path: a pseudo file (socket, pipe, anon inode), whose
				   * only name is its dentry's */

struct sofdsnoop_file {
	__u64 ino;
	__u32 mode;      /* i_mode: S_IFSOCK, S_IFIFO, S_IFREG … */
	__u16 names;     /* names of its path, innermost first */
	__u16 size;      /* bytes of those names (each with its NUL) in strings */
	__u32 flags;     /* SOFDSNOOP_FILE_* */
	__u32 reserved;
};

struct sofdsnoop_event {
	struct tpkit_task_header task;
	__s64 ret;        /* the call's result (bytes, or messages for the mmsg calls) */
	__u64 sock_ino;   /* the socket's inode number (socket:[N]); 0: not open any more */
	__s32 sock_fd;    /* the socket the message went through */
	__u32 call;       /* enum sofdsnoop_call */
	__u32 msg_index;  /* sendmmsg/recvmmsg: the message's index in the vector; else 0 */
	__u32 msg_flags;  /* received: the flags the kernel returned (MSG_CTRUNC) */
	__u32 fd_count;   /* descriptors in the message's SCM_RIGHTS control messages */
	__u32 fds_read;   /* of those, in fds[] (at most SOFDSNOOP_MAX_FDS) */
	__u32 fault;      /* SOFDSNOOP_FAULT_*, SOFDSNOOP_MMSG_CUT; with MMSG_CUT, fd_count is the
			   * count of messages not read */
	__u32 cmsgs_cut;  /* 1: more control messages than were read */
	__u32 named;      /* descriptors whose files were looked up */
	__u32 names_size; /* bytes used in strings; only this much of it is sent */
	__s32 fds[SOFDSNOOP_MAX_FDS];
	struct sofdsnoop_file files[SOFDSNOOP_MAX_FDS];
	char strings[SOFDSNOOP_NAME_ROOM];
};

#endif
