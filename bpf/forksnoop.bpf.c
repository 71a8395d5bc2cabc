/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Every fork, from sched:sched_process_fork: as a classic tracepoint (default) or as a raw
// tracepoint reading the parent and child task_struct with CO-RE (--raw).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "forksnoop.h"
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/sched.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define CLONE_THREAD 0x00010000

/* The classic tracepoint does not say whether the child is a thread; task:task_newtask fires
 * just before it, in the same copy_process() of the same parent, with the clone flags. They
 * are kept in the parent's task-local storage: no hashing, and nothing left behind when the
 * fork fails in between (the next fork of that parent overwrites it). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} clone_flags_of_parent SEC(".maps");

SEC("tracepoint/task/task_newtask")
int record_clone_flags(struct trace_event_raw_task_newtask *ctx)
{
	__u64 *flags;

	if (!tpkit_current_selected())
		return 0;
	flags = bpf_task_storage_get(&clone_flags_of_parent, bpf_get_current_task_btf(), 0,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (flags)
		*flags = BPF_CORE_READ(ctx, clone_flags);
	return 0;
}

/* Each program writes its event where it goes (tpkit_event_begin): straight into its ring
 * reservation, whose every byte is set here. */
SEC("tracepoint/sched/sched_process_fork")
int fork_tp(void *ctx)
{
	struct forksnoop_event stack_event, *event;
	__u64 *flags;

	if (!tpkit_current_selected())
		return 0;
	event = tpkit_event_begin(&stack_event, sizeof(*event));
	if (!event)
		return 0;
	barrier_var(event);
	/* The parent is the current task. */
	tpkit_fill_task_header(&event->parent);
	event->child_tid = tpkit_sched_process_fork_child_pid(ctx);
	/* The record's copy of the name may be shorter than the field: no stale bytes after it. */
	__builtin_memset(event->child_comm, 0, sizeof(event->child_comm));
	tpkit_sched_process_fork_child_comm(ctx, event->child_comm, sizeof(event->child_comm));
	flags = bpf_task_storage_get(&clone_flags_of_parent, bpf_get_current_task_btf(), 0, 0);
	event->is_thread = flags && (*flags & CLONE_THREAD) != 0;
	event->child_pid = event->is_thread ? event->parent.pid : event->child_tid;
	event->reserved = 0;
	tpkit_event_send(ctx, event, sizeof(*event));
	return 0;
}

SEC("raw_tp/sched_process_fork")
int fork_raw_tp(struct bpf_raw_tracepoint_args *ctx)
{
	/* args[0] is the parent, the current task: the header reads it. */
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	struct forksnoop_event stack_event, *event;
	__u32 ids[2];

	if (!tpkit_current_selected())
		return 0;
	event = tpkit_event_begin(&stack_event, sizeof(*event));
	if (!event)
		return 0;
	barrier_var(event);
	tpkit_fill_task_header(&event->parent);
	/* task_struct keeps pid and tgid side by side: one read for both where it still does. */
	if (bpf_core_field_offset(child->tgid) == bpf_core_field_offset(child->pid) + sizeof(__u32)) {
		bpf_probe_read_kernel(ids, sizeof(ids), &child->pid);
	} else {
		ids[0] = BPF_CORE_READ(child, pid);
		ids[1] = BPF_CORE_READ(child, tgid);
	}
	event->child_tid = ids[0];
	event->child_pid = ids[1];
	event->is_thread = ids[0] != ids[1];
	event->reserved = 0;
	/* The whole name field: the kernel pads a task's comm with NULs (strscpy_pad), and the
	 * child's is a copy of its parent's; a fixed-size read costs less than a string read. */
	bpf_probe_read_kernel(event->child_comm, sizeof(event->child_comm), &child->comm);
	tpkit_event_send(ctx, event, sizeof(*event));
	return 0;
}
