/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Run-queue latency as log2 histograms: how long each task waits runnable before it runs. A wait
// begins when the task is woken (sched_wakeup), is new (sched_wakeup_new) or is switched out still
// runnable (sched_switch, preempted), and ends when sched_switch switches it in. Raw tracepoints:
// sched_switch runs at every context switch, and a raw one skips filling a trace record.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include "runqlat.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 key_by = RUNQLAT_ALL;
const volatile bool milliseconds = false;

/* When each waiting thread became runnable. */
TPKIT_TIMING_MAP(runnable_since, __u32);
/* The one histogram, counted per CPU. */
TPKIT_SWAPPED_MAP(hists, BPF_MAP_TYPE_PERCPU_HASH, struct runqlat_key, struct tpkit_log2_hist);
/* -P, -L, --pidnss: thousands of keys, so one copy that the CPUs share (atomic adds): per-CPU
 * copies of 10240 histograms of 512 bytes would take 5 MiB per CPU. */
TPKIT_SWAPPED_MAP(keyed_hists, BPF_MAP_TYPE_HASH, struct runqlat_key, struct tpkit_log2_hist);
TPKIT_ZERO_VALUE(empty_hist, struct tpkit_log2_hist);

static __always_inline void became_runnable(struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid);

	/* tid 0 is a CPU's idle task: it never waits. */
	if (tid && tpkit_task_selected(task))
		tpkit_timing_start(&runnable_since, &tid);
}

/* The inode number of the task's PID namespace, as /proc/PID/ns/pid shows it: the namespace
 * of its pid at its deepest level. */
static __always_inline __u32 pid_namespace_of(struct task_struct *task)
{
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid upid = {};

	bpf_core_read(&upid, sizeof(upid), &pid->numbers[level]);
	return BPF_CORE_READ(upid.ns, ns.inum);
}

static __always_inline void count_wait(struct task_struct *task, __u64 ns)
{
	__u64 value = milliseconds ? ns / 1000000 : ns / 1000;
	struct runqlat_key key = {};
	struct tpkit_log2_hist *hist;
	void *active;

	if (key_by == RUNQLAT_ALL) {
		active = tpkit_active_map(&hists);
		if (!active)
			return;
		hist = tpkit_lookup_or_zero(active, &key, &empty_hist);
		if (hist)
			tpkit_log2_hist_add(hist, value);
		return;
	}
	if (key_by == RUNQLAT_PID) {
		key.id = BPF_CORE_READ(task, tgid);
		BPF_CORE_READ_STR_INTO(&key.comm, task, group_leader, comm);
	} else if (key_by == RUNQLAT_TID) {
		key.id = BPF_CORE_READ(task, pid);
		BPF_CORE_READ_STR_INTO(&key.comm, task, comm);
	} else {
		key.id = pid_namespace_of(task);
	}
	active = tpkit_active_map(&keyed_hists);
	if (!active)
		return;
	hist = tpkit_lookup_or_zero(active, &key, &empty_hist);
	if (hist)
		tpkit_log2_hist_add_atomic(hist, value);
}

/* The woken task is an argument: the current task is its waker. */
SEC("raw_tp/sched_wakeup")
int task_woken(struct bpf_raw_tracepoint_args *ctx)
{
	became_runnable((struct task_struct *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int task_woken_new(struct bpf_raw_tracepoint_args *ctx)
{
	became_runnable((struct task_struct *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/sched_switch")
int task_switched(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u32 tid;
	__u64 ns;

	if (tpkit_sched_switch_prev_runnable(ctx->args))
		became_runnable(prev);
	tid = BPF_CORE_READ(next, pid);
	if (tid && tpkit_timing_elapsed(&runnable_since, &tid, &ns))
		count_wait(next, ns);
	return 0;
}
