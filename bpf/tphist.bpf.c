/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// tphist's engine: a histogram of one integer field of tracepoints chosen at run time, log2,
// log-linear or linear, in total or by a --by key. One instance per classic event, or per group
// of syscall events on raw_syscalls.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/engine.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/task.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Without --by: one cumulative histogram (user space prints differences); only the map of the
 * chosen layout is used, the others stay at one small entry. */
#define TOTAL_MAP(name, hist_type)                  \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, 1);             \
		__type(key, __u32);                 \
		__type(value, hist_type);           \
	} name SEC(".maps")
/* With --by: one histogram per key, drained at every interval. */
#define KEYED_MAP(name, hist_type) \
	TPKIT_SWAPPED_MAP(name, BPF_MAP_TYPE_PERCPU_HASH, struct tpkit_engine_key, hist_type)

TOTAL_MAP(log2_total, struct tpkit_log2_hist);
TOTAL_MAP(loglinear_total, struct tpkit_loglinear_hist);
TOTAL_MAP(linear_total, struct tpkit_linear_hist);
KEYED_MAP(log2_by_key, struct tpkit_log2_hist);
KEYED_MAP(loglinear_by_key, struct tpkit_loglinear_hist);
KEYED_MAP(linear_by_key, struct tpkit_linear_hist);

/* Large enough for every layout. */
TPKIT_ZERO_VALUE(empty_hist, struct tpkit_linear_hist);

/* Values of a signed field below zero: outside every bucket, counted here. */
TPKIT_COUNTER(negatives);

/* The histogram this event adds to: a value of a per-CPU map, so the adds are plain. */
static __always_inline void *histogram(void *record, __u32 event, void *total_map, void *keyed_map)
{
	struct tpkit_engine_key key = {};
	__u32 zero = 0;
	void *keyed;

	if (tpkit_config.key_source == TPKIT_KEY_NONE)
		return bpf_map_lookup_elem(total_map, &zero);
	keyed = tpkit_active_map(keyed_map);
	if (!keyed)
		return 0;
	tpkit_engine_key(record, event, &key);
	return tpkit_lookup_or_zero(keyed, &key, &empty_hist);
}

static __always_inline void add(void *record, __u32 event)
{
	__u64 value;
	void *hist;

	if (!tpkit_current_selected() || !tpkit_engine_filter(record))
		return;
	value = tpkit_field_number(record, &tpkit_config.value);
	if (tpkit_config.value.is_signed && (__s64)value < 0) {
		tpkit_count(&negatives);
		return;
	}
	switch (tpkit_config.hist_layout) {
	case TPKIT_HIST_LOG2:
		hist = histogram(record, event, &log2_total, &log2_by_key);
		if (hist)
			tpkit_log2_hist_add(hist, value);
		break;
	case TPKIT_HIST_LOGLINEAR:
		hist = histogram(record, event, &loglinear_total, &loglinear_by_key);
		if (hist)
			tpkit_loglinear_hist_add(hist, value, tpkit_config.sub_bits);
		break;
	case TPKIT_HIST_LINEAR:
		hist = histogram(record, event, &linear_total, &linear_by_key);
		if (hist)
			tpkit_linear_hist_add(hist, value, tpkit_config.linear_min,
					      tpkit_config.linear_max, tpkit_config.linear_step);
		break;
	}
}

SEC("tracepoint")
int hist_event(void *ctx)
{
	add(ctx, tpkit_config.event);
	return 0;
}

SEC("raw_tracepoint")
int hist_syscall(__u64 *ctx)
{
	struct tpkit_syscall_record rec = {};
	const struct tpkit_syscall_event *event = tpkit_syscall_event(ctx, &rec);

	if (event)
		add(&rec, event->event);
	return 0;
}
