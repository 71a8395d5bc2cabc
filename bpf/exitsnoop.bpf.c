/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every process exit (every thread's with --threaded), from sched:sched_process_exit, reading
 * the exiting task_struct with CO-RE. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/tools/exitsnoop.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/sched.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

/* include/linux/sched/signal.h, the same from 6.1 to 6.18 */
#define SIGNAL_GROUP_EXIT 0x00000004

const volatile bool threaded = false;    /* every thread's exit, not only the process's */
const volatile bool failed_only = false; /* only non-zero statuses */

/* A process, for all time: its PID with its start. */
struct process_key {
	__u64 start_ns;
	__u32 tgid;
	__u32 reserved;
};

/* Processes whose end was reported, where the kernel does not say which exit ends the group
 * (below). Entries are never looked up again once the group is gone: least recently used ones
 * make room. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct process_key);
	__type(value, __u8);
} ended_processes SEC(".maps");

/* Whether this exit ends the process. The kernel knows (do_exit()'s group_dead: this thread
 * took signal->live to zero), and newer kernels say so in the tracepoint (6.18 does, 6.1 does
 * not). Without it, live is read at the tracepoint, when do_exit() has already counted this
 * thread out: zero means no thread is left, but threads that exit_group() takes down together
 * may each see zero once the last one has counted itself out. Of those, the first to record
 * the process reports it. */
static __always_inline bool ends_process(void *ctx, struct task_struct *task, __u64 start_ns)
{
	struct process_key key = {};
	__u8 one = 1;

	if (bpf_core_field_exists(struct trace_event_raw_sched_process_exit___v6_18, group_dead))
		return tpkit_sched_process_exit_group_dead(ctx);
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return false;
	key.start_ns = start_ns;
	key.tgid = BPF_CORE_READ(task, tgid);
	return bpf_map_update_elem(&ended_processes, &key, &one, BPF_NOEXIST) == 0;
}

/* The process's status as its parent's wait() will see it: wait_task_zombie() takes the group
 * exit code when the group was ended together (exit_group(), a fatal signal), else the
 * leader's own exit code. */
static __always_inline __u32 process_status(struct task_struct *task)
{
	if (BPF_CORE_READ(task, signal, flags) & SIGNAL_GROUP_EXIT)
		return BPF_CORE_READ(task, signal, group_exit_code);
	return BPF_CORE_READ(task, group_leader, exit_code);
}

SEC("tracepoint/sched/sched_process_exit")
int process_exit(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct exitsnoop_event event = {};

	if (!tpkit_current_selected())
		return 0;
	if (threaded) {
		event.status = BPF_CORE_READ(task, exit_code);
		event.start_ns = BPF_CORE_READ(task, start_time);
	} else {
		/* The process ends with its last thread, which need not be its leader: the leader
		 * may pthread_exit() first, and any thread may be the last that exit_group()
		 * takes down. */
		event.start_ns = BPF_CORE_READ(task, group_leader, start_time);
		if (!ends_process(ctx, task, event.start_ns))
			return 0;
		event.status = process_status(task);
	}
	if (failed_only && event.status == 0)
		return 0;
	tpkit_fill_task_header(&event.task);
	if (!threaded)
		BPF_CORE_READ_STR_INTO(&event.task.comm, task, group_leader, comm);
	event.ppid = BPF_CORE_READ(task, real_parent, tgid);
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
