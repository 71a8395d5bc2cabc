/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every fork, from sched:sched_process_fork: as a classic tracepoint (default) or as a raw
 * tracepoint reading the parent and child task_struct with CO-RE (--raw). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/tools/forksnoop.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/sched.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

/* Whether the new task TID is a thread of the current task's process. The classic record does
 * not say, but sched_process_fork fires in the parent before the child first runs (kernel_clone()
 * fires it, then wakes the child), so the child is still linked where copy_process() put it: a
 * new process at the tail of its parent's children, a new thread at the tail of the thread
 * group. Each list holds only tasks of its kind, and a pid names one live task, so a match is
 * certain. Other threads of the parent may have cloned (after the child) or exited since: a few
 * steps back from each tail, then the whole group from its head (RCU keeps a forward walk
 * safe; the child cannot leave it before it runs). A CLONE_PARENT process ends there too. */
#define FORK_TAIL_STEPS 4
#define FORK_GROUP_STEPS (1 << 16)

/* The pid of the task whose list_head at NODE_OFFSET is at NODE; nonzero when unreadable. */
static __always_inline long pid_of_node(void *node, __u32 node_offset, pid_t *pid)
{
	return bpf_probe_read_kernel(pid, sizeof(*pid), node - node_offset +
					 bpf_core_field_offset(struct task_struct, pid));
}

static __always_inline bool tail_holds(void *head, __u32 node_offset, pid_t tid)
{
	void *pos = head;
	pid_t pid;

#pragma unroll
	for (int i = 0; i < FORK_TAIL_STEPS; i++) {
		if (bpf_probe_read_kernel(&pos, sizeof(pos), pos + offsetof(struct list_head, prev)) ||
		    pos == head)
			return false;
		if (pid_of_node(pos, node_offset, &pid))
			return false;
		if (pid == tid)
			return true;
	}
	return false;
}

struct group_walk {
	void *head, *pos;
	__u32 node_offset;
	pid_t tid;
	bool found;
};

static long group_step(__u32 index, void *data)
{
	struct group_walk *w = data;
	pid_t pid;

	if (bpf_probe_read_kernel(&w->pos, sizeof(w->pos), w->pos + offsetof(struct list_head, next)) ||
	    w->pos == w->head)
		return 1;
	if (pid_of_node(w->pos, w->node_offset, &pid))
		return 1;
	w->found = pid == w->tid;
	return w->found;
}

static __always_inline bool child_is_thread(pid_t tid)
{
	struct task_struct *parent = (struct task_struct *)bpf_get_current_task();
	__u32 thread_node = bpf_core_field_offset(struct task_struct, thread_node);
	struct group_walk w = {};

	if (tail_holds((void *)parent + bpf_core_field_offset(struct task_struct, children),
		       bpf_core_field_offset(struct task_struct, sibling), tid))
		return false;
	w.head = (void *)BPF_CORE_READ(parent, signal) +
		 bpf_core_field_offset(struct signal_struct, thread_head);
	if (tail_holds(w.head, thread_node, tid))
		return true;
	w.pos = w.head;
	w.node_offset = thread_node;
	w.tid = tid;
	bpf_loop(FORK_GROUP_STEPS, group_step, &w, 0);
	return w.found;
}

/* Each program writes its event where it goes (tpkit_event_begin): straight into its ring
 * reservation, whose every byte is set here. */
SEC("tracepoint/sched/sched_process_fork")
int fork_tp(void *ctx)
{
	struct forksnoop_event stack_event, *event;

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
	event->is_thread = child_is_thread(event->child_tid);
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
