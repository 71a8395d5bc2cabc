/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A time of each task (a run-queue wait, a stay on or off the CPU) in log2 histograms: one, or
 * one per process, thread or PID namespace (include/tpkit/task.h's TPKIT_SPLIT_*), in
 * microseconds or milliseconds, as user space chose in rodata. src/collectors/task_hists.hpp reads
 * them.
 *
 * The one histogram is a per-CPU array that only grows (user space takes its growth each
 * interval): found without hashing, at every context switch. Split ones live in a swapped hash,
 * drained each interval without loss, one copy that the CPUs share (atomic adds): per-CPU copies
 * of 10240 histograms of 512 bytes would take 5 MiB per CPU.
 *
 * The tool defines the maps, under the names user space reads them by, and
 * tpkit_task_hist_add(task, ns) adds to them:
 *
 *	struct tpkit_task_hist_map task_hist SEC(".maps");
 *	TPKIT_SWAPPED_HALF(task_hists, BPF_MAP_TYPE_HASH, struct tpkit_task_key,
 *			   struct tpkit_log2_hist) task_hists_a SEC(".maps"), task_hists_b SEC(".maps");
 *	TPKIT_SWAPPED_SLOT(task_hists) task_hists SEC(".maps");
 *	TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_task_hist SEC(".maps");
 *	struct tpkit_counter_map tpkit_missed SEC(".maps");
 */
#ifndef TPKIT_TASK_HISTS_BPF_H
#define TPKIT_TASK_HISTS_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.h>

const volatile __u32 tpkit_hist_split = TPKIT_SPLIT_NONE;
const volatile bool tpkit_hist_milliseconds = false;

/* The one histogram. */
struct tpkit_task_hist_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tpkit_log2_hist);
};

/* The inode number of the task's PID namespace, as /proc/PID/ns/pid shows it: the namespace
 * of its pid at its deepest level. */
static __always_inline __u32 tpkit_pid_namespace_of(struct task_struct *task)
{
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid upid = {};

	bpf_core_read(&upid, sizeof(upid), &pid->numbers[level]);
	return BPF_CORE_READ(upid.ns, ns.inum);
}

/* Adds the time to ONE, or to the split histograms in SPLIT (a swapped map, SPLIT_FIRST its first
 * half), new ones copied from EMPTY; a full map is counted in MISSED. */
static __always_inline void tpkit_task_hist_add_to(void *one, void *split, void *split_first,
						   void *empty, void *missed,
						   struct task_struct *task, __u64 ns)
{
	__u64 value = tpkit_hist_milliseconds ? ns / 1000000 : ns / 1000;
	struct tpkit_task_key key = {};
	struct tpkit_log2_hist *hist;
	__u32 zero = 0;
	void *active;

	if (tpkit_hist_split == TPKIT_SPLIT_NONE) {
		hist = bpf_map_lookup_elem(one, &zero);
		if (hist)
			tpkit_log2_hist_add(hist, value);
		return;
	}
	if (tpkit_hist_split == TPKIT_SPLIT_PROCESS) {
		key.id = BPF_CORE_READ(task, tgid);
		BPF_CORE_READ_STR_INTO(&key.comm, task, group_leader, comm);
	} else if (tpkit_hist_split == TPKIT_SPLIT_THREAD) {
		key.id = BPF_CORE_READ(task, pid);
		BPF_CORE_READ_STR_INTO(&key.comm, task, comm);
	} else {
		key.id = tpkit_pid_namespace_of(task);
	}
	active = tpkit_active_map(split, split_first);
	if (!active)
		return;
	hist = tpkit_lookup_or_zero(active, &key, empty, missed);
	if (hist)
		tpkit_log2_hist_add_atomic(hist, value);
}

/* Adds to the tool's maps, by their names. */
#define tpkit_task_hist_add(task, ns)                                                    \
	tpkit_task_hist_add_to(&task_hist, &task_hists, &task_hists_a, &empty_task_hist, \
			       &tpkit_missed, (task), (ns))

#endif
