/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every new thread, from task:task_newtask: copy_process() fires it in the creating thread once
 * the new task exists, with the clone flags; CLONE_THREAD makes it a thread of the creator's
 * process. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/tools/threadsnoop.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/task.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

SEC("tracepoint/task/task_newtask")
int thread_created(void *ctx)
{
	struct threadsnoop_event stack_event, *event;

	if (!(tpkit_task_newtask_clone_flags(ctx) & TPKIT_CLONE_THREAD))
		return 0;
	if (!tpkit_current_selected()) /* the creating thread */
		return 0;
	event = tpkit_event_begin(&stack_event, sizeof(*event));
	if (!event)
		return 0;
	barrier_var(event);
	tpkit_fill_task_header(&event->task);
	event->new_tid = tpkit_task_newtask_pid(ctx);
	event->reserved = 0;
	tpkit_event_send(ctx, event, sizeof(*event));
	return 0;
}
