/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tphist's engine: a histogram of one integer field of tracepoints chosen at run time, log2,
 * log-linear or linear, in total or by a --by key. One instance per classic event, or per group
 * of syscall events on raw_syscalls. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/engine_hist.bpf.h>
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

/* Values of a signed field below zero: outside every bucket, counted here. */
struct tpkit_counter_map negatives SEC(".maps");

/* The value measured: field * multiplier / divisor ('nr_sector*512', --unit us of a field in
 * nanoseconds), set by user space before load. A product past 2^64 - 1 stays there (the top
 * bucket). */
const volatile __u64 tphist_multiplier = 1;
const volatile __u64 tphist_divisor = 1;
/* (2^64 - 1) / tphist_multiplier, from user space: the largest value that multiplies without
 * overflow (clang would turn the division here into a 128-bit multiply BPF does not have). */
const volatile __u64 tphist_multiply_limit = ~0ULL;

static __always_inline void add(void *ctx, void *record, __u32 event)
{
	struct tpkit_engine_key key = {};
	__u64 value;

	if (!tpkit_current_selected() || !tpkit_engine_filter(record, &tpkit_filter_user_str))
		return;
	value = tpkit_field_number(record, &tpkit_config.value);
	if (tpkit_config.value.is_signed && (__s64)value < 0) {
		tpkit_count(&negatives);
		return;
	}
	if (tphist_multiplier > 1)
		value = value > tphist_multiply_limit ? ~0ULL : value * tphist_multiplier;
	if (tphist_divisor > 1)
		value /= tphist_divisor;
	if (tpkit_engine_keyed())
		tpkit_engine_key(ctx, record, event, &key);
	tpkit_engine_hist_add(&key, value);
}

SEC("tracepoint")
int hist_event(void *ctx)
{
	if (!tpkit_engine_armed)
		return 0;
	add(ctx, ctx, tpkit_config.event);
	return 0;
}

SEC("raw_tracepoint")
int hist_syscall(__u64 *ctx)
{
	struct tpkit_syscall_record rec = {};
	const struct tpkit_syscall_event *event;

	if (!tpkit_engine_armed)
		return 0;
	event = tpkit_syscall_event(ctx, &rec, &tpkit_syscall_events);
	if (event)
		add(ctx, &rec, event->event);
	return 0;
}
