/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The filters every tool takes on the current task (-p, -t, --comm, -u, --cgroup, and the tool's
 * own process left out unless --include-self) and on the CPU an event happens on (--cpu), as
 * rodata
 * that user space sets before load (apply_task_filters in include/tpkit/run/stream.hpp); the
 * verifier removes the checks of filters left unset.
 *
 * Where the task of interest is not the current one (the task woken at sched_wakeup, the one
 * switched in or out at sched_switch), tpkit_task_selected() and tpkit_fill_task_header_of()
 * take it as a struct task_struct *: they read it with CO-RE, so include vmlinux.h first. */
#ifndef TPKIT_TASK_BPF_H
#define TPKIT_TASK_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/limits.h>
#include <tpkit/task.h>

const volatile __u32 tpkit_target_tgid = 0;
const volatile __u32 tpkit_target_tid = 0;
/* (uid_t)-1 is no user's ID: no filter. */
const volatile __u32 tpkit_target_uid = (__u32)-1;
/* A cgroup v2 ID (the directory's inode number), 0: no filter. */
const volatile __u64 tpkit_target_cgroup = 0;
const volatile char tpkit_target_comm[TPKIT_COMM_LEN] = {};
/* --cpu: only events on this CPU; (__u32)-1: no filter. */
const volatile __u32 tpkit_target_cpu = (__u32)-1;
/* The tool's own process (its tgid), left out: its set-up, reads and capability checks are no
 * events of the system it watches. 0 with --include-self. */
const volatile __u32 tpkit_excluded_tgid = 0;

/* clone()'s flag that makes the new task a thread of the caller's process (the kernel's
 * include/uapi/linux/sched.h), as task:task_newtask's clone_flags carry it. */
#define TPKIT_CLONE_THREAD 0x00010000ULL

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

/* Whether the current task passes the filters. Without filters it costs nothing: the verifier
 * drops every check (and its helper call) whose rodata is unset. */
static __always_inline bool tpkit_current_selected(void)
{
	if (tpkit_target_cpu != (__u32)-1 && bpf_get_smp_processor_id() != tpkit_target_cpu)
		return false;
	if (tpkit_target_tgid || tpkit_target_tid || tpkit_excluded_tgid) {
		__u64 id = bpf_get_current_pid_tgid();

		if (tpkit_excluded_tgid && (id >> 32) == tpkit_excluded_tgid)
			return false;
		if (tpkit_target_tgid && (id >> 32) != tpkit_target_tgid)
			return false;
		if (tpkit_target_tid && (__u32)id != tpkit_target_tid)
			return false;
	}
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

#ifdef __VMLINUX_H__
/* Whether `task` passes the filters, read as the helpers above read the current task: its
 * cred's uid (bpf_get_current_uid_gid) and its cgroup v2 (bpf_get_current_cgroup_id). */
static __always_inline bool tpkit_task_selected(struct task_struct *task)
{
	if (tpkit_target_cpu != (__u32)-1 && bpf_get_smp_processor_id() != tpkit_target_cpu)
		return false;
	if (tpkit_excluded_tgid && BPF_CORE_READ(task, tgid) == tpkit_excluded_tgid)
		return false;
	if (tpkit_target_tgid && BPF_CORE_READ(task, tgid) != tpkit_target_tgid)
		return false;
	if (tpkit_target_tid && BPF_CORE_READ(task, pid) != tpkit_target_tid)
		return false;
	if (tpkit_target_uid != (__u32)-1 && BPF_CORE_READ(task, cred, uid.val) != tpkit_target_uid)
		return false;
	if (tpkit_target_cgroup &&
	    BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id) != tpkit_target_cgroup)
		return false;
	if (tpkit_target_comm[0]) {
		char comm[TPKIT_COMM_LEN];

		BPF_CORE_READ_STR_INTO(&comm, task, comm);
		if (!tpkit_comm_equal(comm, tpkit_target_comm))
			return false;
	}
	return true;
}

/* `task` into a streaming event's header, as tpkit_fill_task_header() fills it for the current
 * task (cpu: the CPU running the program). */
static __always_inline void tpkit_fill_task_header_of(struct tpkit_task_header *h,
						      struct task_struct *task)
{
	h->timestamp_ns = bpf_ktime_get_ns();
	h->pid = BPF_CORE_READ(task, tgid);
	h->tid = BPF_CORE_READ(task, pid);
	h->cpu = bpf_get_smp_processor_id();
	h->uid = BPF_CORE_READ(task, cred, uid.val);
	BPF_CORE_READ_STR_INTO(&h->comm, task, comm);
}
#endif

#endif
