/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* syncsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/syncsnoop.h>): largest fields first. */
#ifndef TPKIT_SYNCSNOOP_H
#define TPKIT_SYNCSNOOP_H

#include <tpkit/task.h>

struct syncsnoop_event {
	struct tpkit_task_header task;
	__u64 offset;     /* sync_file_range: offset; msync: start address */
	__u64 nbytes;     /* sync_file_range: nbytes; msync: len */
	__s32 syscall_nr; /* which call: the syscall's number */
	__s32 fd;         /* syncfs, fsync, fdatasync, sync_file_range; -1 for sync and msync */
	__u32 flags;      /* msync, sync_file_range */
	__u32 reserved;
};

#endif
