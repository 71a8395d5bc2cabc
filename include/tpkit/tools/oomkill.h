/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* oomkill's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/oomkill.h>): largest fields first, no holes. */
#ifndef TPKIT_OOMKILL_H
#define TPKIT_OOMKILL_H

#include <tpkit/task.h>

struct oomkill_event {
	struct tpkit_task_header trigger; /* the task that ran the OOM killer (current) */
	/* The victim's memory as oom:mark_victim records it, in kB; valid when has_figures. */
	__u64 total_vm_kb;
	__u64 anon_rss_kb;
	__u64 file_rss_kb;
	__u64 shmem_rss_kb;
	__u64 pgtables_kb;
	__u32 killed_pid; /* tgid */
	__u32 killed_tid; /* the thread the kernel marked: the one holding the mm */
	__u32 killed_uid; /* valid when has_figures */
	__s16 oom_score_adj; /* valid when has_figures */
	__u8 has_figures;    /* the running kernel's mark_victim has total_vm … oom_score_adj */
	__u8 reserved;
	char killed_comm[TPKIT_COMM_LEN];
};

#endif
