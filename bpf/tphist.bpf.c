/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// tphist's engine: a histogram of one integer field of a tracepoint chosen at run time, log2,
// log-linear or linear, in total or by a --by key.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/engine_hist.bpf.h>
#include <tpkit/task.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Values of a signed field below zero: outside every bucket, counted here. */
TPKIT_COUNTER(negatives);

SEC("tracepoint")
int hist_event(void *ctx)
{
	struct tpkit_engine_key key = {};
	__u64 value;

	if (!tpkit_current_selected() || !tpkit_engine_filter(ctx))
		return 0;
	value = tpkit_field_number(ctx, &tpkit_config.value);
	if (tpkit_config.value.is_signed && (__s64)value < 0) {
		tpkit_count(&negatives);
		return 0;
	}
	if (tpkit_config.key_source != TPKIT_KEY_NONE)
		tpkit_engine_key(ctx, &key);
	tpkit_engine_hist_add(&key, value);
	return 0;
}
