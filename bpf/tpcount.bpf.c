/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tpcount's engine: counts the events of tracepoints chosen at run time, in total or by a --by
 * key. One instance per classic event, or per group of syscall events on raw_syscalls; the
 * instances share their maps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/engine.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The engine's maps (engine.bpf.h). */
struct tpkit_filter_user_str_map tpkit_filter_user_str SEC(".maps");
struct tpkit_syscall_events_map tpkit_syscall_events SEC(".maps");
TPKIT_STACK_MAP(TPKIT_STACK_DEPTH) tpkit_stacks SEC(".maps");
struct tpkit_counter_map tpkit_stack_errors SEC(".maps");
struct tpkit_pid_comms_map tpkit_pid_comms SEC(".maps");
/* Keys that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

/* Without --by: one cumulative counter per event index (user space prints differences). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* set to the number of events */
	__type(key, __u32);
	__type(value, __u64);
} totals SEC(".maps");

/* With --by: one counter per key, drained at every interval. */
TPKIT_SWAPPED_HALF(by_key, BPF_MAP_TYPE_PERCPU_HASH, struct tpkit_engine_key, __u64)
	by_key_a SEC(".maps"), by_key_b SEC(".maps");
TPKIT_SWAPPED_SLOT(by_key) by_key SEC(".maps");

static __always_inline void count(void *ctx, void *record, __u32 event)
{
	struct tpkit_engine_key key = {};
	__u64 zero = 0, *count = 0;
	void *keyed;

	if (!tpkit_current_selected() || !tpkit_engine_filter(record, &tpkit_filter_user_str))
		return;
	if (!tpkit_engine_keyed()) {
		count = bpf_map_lookup_elem(&totals, &event);
	} else {
		keyed = TPKIT_ACTIVE_MAP(by_key);
		if (!keyed)
			return;
		tpkit_engine_key(ctx, record, event, &key);
		count = tpkit_lookup_or_init(keyed, &key, &zero, &tpkit_missed);
	}
	if (count)
		*count += 1;
}

SEC("tracepoint")
int count_event(void *ctx)
{
	if (!tpkit_engine_armed)
		return 0;
	count(ctx, ctx, tpkit_config.event);
	return 0;
}

SEC("raw_tracepoint")
int count_syscall(__u64 *ctx)
{
	struct tpkit_syscall_record rec = {};
	const struct tpkit_syscall_event *event;

	if (!tpkit_engine_armed)
		return 0;
	event = tpkit_syscall_event(ctx, &rec, &tpkit_syscall_events);
	if (event)
		count(ctx, &rec, event->event);
	return 0;
}
