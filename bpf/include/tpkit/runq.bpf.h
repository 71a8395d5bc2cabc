/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Run-queue waits, as runqlat and runqslower time them: a wait begins when a task is woken
 * (sched_wakeup), is new (sched_wakeup_new) or is switched out still runnable (preempted, seen at
 * sched_switch), and ends when sched_switch switches it in. The tool keeps when each waiting
 * thread became runnable in
 *
 *	TPKIT_TIMING_MAP(__u32) runnable_since SEC(".maps");
 *
 * its programs on the raw sched_wakeup and sched_wakeup_new call
 * tpkit_runq_woken(&runnable_since, ctx->args, &tpkit_missed), and its sched_switch program
 * calls tpkit_runq_switched(&runnable_since, ctx->args, &ns, &tpkit_missed) and gets the
 * switched-in task's wait, if it was timed. A start that finds the map full is counted in
 * tpkit_missed. */
#ifndef TPKIT_RUNQ_BPF_H
#define TPKIT_RUNQ_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>

static __always_inline void tpkit_runq_became_runnable(void *starts, struct task_struct *task,
						       void *missed)
{
	__u32 tid = BPF_CORE_READ(task, pid);

	/* tid 0 is a CPU's idle task: it never waits. */
	if (tid && tpkit_task_selected(task))
		tpkit_timing_start(starts, &tid, missed);
}

/* At sched_wakeup(p) or sched_wakeup_new(p): the woken task is the argument, the current task
 * is its waker. */
static __always_inline void tpkit_runq_woken(void *starts, __u64 *args, void *missed)
{
	tpkit_runq_became_runnable(starts, (struct task_struct *)args[0], missed);
}

/* At sched_switch(preempt, prev, next): a preempted prev starts waiting; true with next's wait
 * in *ns when it was timed. */
static __always_inline bool tpkit_runq_switched(void *starts, __u64 *args, __u64 *ns, void *missed)
{
	struct task_struct *prev = (struct task_struct *)args[1];
	struct task_struct *next = (struct task_struct *)args[2];
	__u32 tid;

	if (tpkit_sched_switch_prev_runnable(args))
		tpkit_runq_became_runnable(starts, prev, missed);
	tid = BPF_CORE_READ(next, pid);
	return tid && tpkit_timing_elapsed(starts, &tid, ns);
}

#endif
