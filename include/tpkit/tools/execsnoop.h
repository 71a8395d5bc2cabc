/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* execsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/execsnoop.h>): largest fields first, then the filename and the arguments, packed. */
#ifndef TPKIT_EXECSNOOP_H
#define TPKIT_EXECSNOOP_H

#include <tpkit/task.h>

enum execsnoop_call {
	EXECSNOOP_EXECVE = 1,
	EXECSNOOP_EXECVEAT,
};

/* The filename, with its NUL, as long as the kernel takes one (PATH_MAX). */
#define EXECSNOOP_FILENAME_MAX 4096
/* One argument with its NUL: a longer one is cut there (and counted in args_cut). */
#define EXECSNOOP_ARG_MAX 256
/* --max-args: the default (bcc's) and the most. */
#define EXECSNOOP_DEFAULT_ARGS 20
#define EXECSNOOP_MOST_ARGS 128
/* The arguments' room in all (bcc's FULL_MAX_ARGS_ARR is 7680): once an argument might not fit,
 * the rest are counted, not read. */
#define EXECSNOOP_ARGS_ROOM 8192


struct execsnoop_event {
	struct tpkit_task_header task; /* at the return: the new comm after a successful exec */
	/* Bit i: argv[i] is cut at EXECSNOOP_ARG_MAX - 1 bytes (or was unreadable, and is empty). */
	__u64 args_cut[EXECSNOOP_MOST_ARGS / 64];
	__u32 ppid;
	__s32 ret;           /* 0, or -errno */
	__u32 call;          /* enum execsnoop_call */
	__u32 argc;          /* argv's length (counted up to 2M pointers: more than an exec takes) */
	__u32 args_count;    /* argv[0..args_count) are in strings, after the filename */
	__u32 filename_cut;  /* 1: the filename is longer than the event holds */
	__u32 filename_size; /* with its NUL; 0 when it could not be read */
	/* The filename, then args_count arguments, each with its NUL. Only strings_size bytes are
	 * valid (and sent). */
	__u32 strings_size;
	char strings[EXECSNOOP_FILENAME_MAX + EXECSNOOP_ARGS_ROOM];
};

#endif
