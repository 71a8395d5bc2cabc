/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The filters every tool takes on the current task (-p, -t, --comm, -u, --cgroup), as rodata
 * that user space sets before load (apply_task_filters in include/tpkit/stream.hpp); the
 * verifier removes the checks of filters left unset. */
#ifndef TPKIT_TASK_BPF_H
#define TPKIT_TASK_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/limits.h>
#include <tpkit/task.h>

const volatile __u32 tpkit_target_tgid = 0;
const volatile __u32 tpkit_target_tid = 0;
/* (uid_t)-1 is no user's ID: no filter. */
const volatile __u32 tpkit_target_uid = (__u32)-1;
/* A cgroup v2 ID (the directory's inode number), 0: no filter. */
const volatile __u64 tpkit_target_cgroup = 0;
const volatile char tpkit_target_comm[TPKIT_COMM_LEN] = {};

static __always_inline bool tpkit_comm_equal(const char *a, const volatile char *b)
{
#pragma unroll
	for (int i = 0; i < TPKIT_COMM_LEN; i++) {
		if (a[i] != b[i])
			return false;
		if (a[i] == '\0')
			return true;
	}
	return true;
}

/* Whether the current task passes the filters. */
static __always_inline bool tpkit_current_selected(void)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (tpkit_target_tgid && (id >> 32) != tpkit_target_tgid)
		return false;
	if (tpkit_target_tid && (__u32)id != tpkit_target_tid)
		return false;
	if (tpkit_target_uid != (__u32)-1 && (__u32)bpf_get_current_uid_gid() != tpkit_target_uid)
		return false;
	if (tpkit_target_cgroup && bpf_get_current_cgroup_id() != tpkit_target_cgroup)
		return false;
	if (tpkit_target_comm[0]) {
		char comm[TPKIT_COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		if (!tpkit_comm_equal(comm, tpkit_target_comm))
			return false;
	}
	return true;
}

/* The current task into the header that streaming tools' events begin with. */
static __always_inline void tpkit_fill_task_header(struct tpkit_task_header *h)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->timestamp_ns = bpf_ktime_get_ns();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->cpu = bpf_get_smp_processor_id();
	h->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

#endif
