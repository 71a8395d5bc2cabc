/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// tphist's engine: a histogram of one integer field of tracepoints chosen at run time, log2,
// log-linear or linear, in total or by a --by key. One instance per classic event, or per group
// of syscall events on raw_syscalls.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/engine_hist.bpf.h>
#include <tpkit/task.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Values of a signed field below zero: outside every bucket, counted here. */
TPKIT_COUNTER(negatives);

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

	if (!tpkit_current_selected() || !tpkit_engine_filter(record))
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
	event = tpkit_syscall_event(ctx, &rec);
	if (event)
		add(ctx, &rec, event->event);
	return 0;
}
