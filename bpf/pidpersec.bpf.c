/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* New tasks counted in the kernel, from task:task_newtask: copy_process() fires it in the
 * creating task for every task it makes (forks, threads, io_uring workers), as bcc's kprobe on
 * sched_fork() counts them, but only once the task exists. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/tools/pidpersec.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/task.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pidpersec_counts);
} counts SEC(".maps");

SEC("tracepoint/task/task_newtask")
int task_created(void *ctx)
{
	struct pidpersec_counts *c;
	__u32 zero = 0;

	if (!tpkit_current_selected()) /* the creating task */
		return 0;
	c = bpf_map_lookup_elem(&counts, &zero);
	if (!c)
		return 0;
	/* Atomic: a program preempted on its CPU by another run of it loses no increment. */
	if (tpkit_task_newtask_clone_flags(ctx) & TPKIT_CLONE_THREAD)
		__sync_fetch_and_add(&c->threads, 1);
	else
		__sync_fetch_and_add(&c->processes, 1);
	return 0;
}
