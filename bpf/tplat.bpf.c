/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tplat's engine: the time from a start tracepoint to an end tracepoint of the same thread, or
 * of the same value of a field of each, as a histogram (engine_hist.bpf.h). One instance of
 * this object is loaded per end: the start's instance records start times in `pending`, which
 * both share, and the end's instance takes them out and adds the time to its histograms. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/engine_hist.bpf.h>
#include <tpkit/task.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The engine's maps (engine.bpf.h). */
struct tpkit_filter_user_str_map tpkit_filter_user_str SEC(".maps");
/* Unused: tplat has no syscall instances (raw_syscalls); created as in the other engines. */
struct tpkit_syscall_events_map tpkit_syscall_events SEC(".maps");
TPKIT_STACK_MAP(TPKIT_STACK_DEPTH) tpkit_stacks SEC(".maps");
struct tpkit_counter_map tpkit_stack_errors SEC(".maps");
struct tpkit_pid_comms_map tpkit_pid_comms SEC(".maps");
/* Keys that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");
/* The histograms (engine_hist.bpf.h). */
TPKIT_ENGINE_TOTAL_MAP(struct tpkit_log2_hist) log2_total SEC(".maps");
TPKIT_ENGINE_TOTAL_MAP(struct tpkit_loglinear_hist) loglinear_total SEC(".maps");
TPKIT_ENGINE_TOTAL_MAP(struct tpkit_linear_hist) linear_total SEC(".maps");
TPKIT_ENGINE_KEYED_HALF(log2_by_key, struct tpkit_log2_hist)
	log2_by_key_a SEC(".maps"), log2_by_key_b SEC(".maps");
TPKIT_SWAPPED_SLOT(log2_by_key) log2_by_key SEC(".maps");
TPKIT_ENGINE_KEYED_HALF(loglinear_by_key, struct tpkit_loglinear_hist)
	loglinear_by_key_a SEC(".maps"), loglinear_by_key_b SEC(".maps");
TPKIT_SWAPPED_SLOT(loglinear_by_key) loglinear_by_key SEC(".maps");
TPKIT_ENGINE_KEYED_HALF(linear_by_key, struct tpkit_linear_hist)
	linear_by_key_a SEC(".maps"), linear_by_key_b SEC(".maps");
TPKIT_SWAPPED_SLOT(linear_by_key) linear_by_key SEC(".maps");
TPKIT_ZERO_VALUE(struct tpkit_linear_hist) empty_hist SEC(".maps");

#define EEXIST 17

/* Set by user space before load. */
const volatile bool tplat_is_end = false;
/* Match by the current thread's ID; otherwise by the field in tpkit_config.value. */
const volatile bool tplat_by_thread = true;
/* The histogram's unit in nanoseconds (1, 1000, 1000000). */
const volatile __u64 tplat_unit_ns = 1;

/* A start waiting for its end: when, and the --by key of the start event. */
struct tplat_start {
	__u64 ns;
	struct tpkit_engine_key key;
};

/* Starts waiting for their end, by thread ID or field value; --max-pending sets max_entries.
 * A plain hash rather than an LRU one, so that a full map is seen and counted (pending_full)
 * instead of older starts silently evicted. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u64);
	__type(value, struct tplat_start);
} pending SEC(".maps");

/* Starts not recorded because `pending` was full: their ends find no start. */
struct tpkit_counter_map pending_full SEC(".maps");
/* Starts that replaced a start of the same thread or value that had not ended yet: the earlier
 * one's time is lost. */
struct tpkit_counter_map restarts SEC(".maps");

static __always_inline __u64 match_value(void *ctx)
{
	if (tplat_by_thread)
		return (__u32)bpf_get_current_pid_tgid();
	return tpkit_field_number(ctx, &tpkit_config.value);
}

static __always_inline void record_start(void *ctx)
{
	struct tplat_start start = {};
	__u64 id;
	long err;

	if (!tpkit_current_selected())
		return;
	id = match_value(ctx);
	if (tpkit_engine_keyed())
		tpkit_engine_key(ctx, ctx, tpkit_config.event, &start.key);
	start.ns = bpf_ktime_get_ns();
	err = bpf_map_update_elem(&pending, &id, &start, BPF_NOEXIST);
	if (err == -EEXIST) {
		tpkit_count(&restarts);
		err = bpf_map_update_elem(&pending, &id, &start, BPF_EXIST);
	}
	if (err)
		tpkit_count(&pending_full);
}

static __always_inline void record_end(void *ctx)
{
	__u64 now = bpf_ktime_get_ns(), id = match_value(ctx);
	struct tplat_start *pending_start, start;

	pending_start = bpf_map_lookup_elem(&pending, &id);
	if (!pending_start)
		return;
	start = *pending_start;
	/* Two ends of one start at once (two CPUs): only the one that removes it counts. */
	if (bpf_map_delete_elem(&pending, &id) || now < start.ns)
		return;
	tpkit_engine_hist_add(&start.key, (now - start.ns) / tplat_unit_ns);
}

SEC("tracepoint")
int lat_event(void *ctx)
{
	if (!tpkit_engine_armed || !tpkit_engine_filter(ctx, &tpkit_filter_user_str))
		return 0;
	if (tplat_is_end)
		record_end(ctx);
	else
		record_start(ctx);
	return 0;
}
