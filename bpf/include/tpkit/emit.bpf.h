/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Event transport shared by every streaming BPF program: a BPF ring buffer by default, a perf
 * buffer when the kernel has no ring buffer or the user asks for it (user space decides before
 * load through tpkit_use_perf_buffer). Records that do not fit, in either, are counted in a
 * per-CPU drop counter where they happen: exact, unlike the perf buffer's own lost-sample
 * records, which the kernel sends only once a later sample fits. */
#ifndef TPKIT_EMIT_BPF_H
#define TPKIT_EMIT_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/counter.bpf.h>
#include <tpkit/limits.h>

const volatile bool tpkit_use_perf_buffer = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TPKIT_RINGBUF_BYTES);
} tpkit_ringbuf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} tpkit_perfbuf SEC(".maps");

TPKIT_COUNTER(tpkit_drops);

static __always_inline void tpkit_emit(void *ctx, void *event, __u64 size)
{
	long err;

	if (tpkit_use_perf_buffer)
		err = bpf_perf_event_output(ctx, &tpkit_perfbuf, BPF_F_CURRENT_CPU, event, size);
	else
		/* Never a wake-up: the reader consumes on a short timer (EventReader::poll). A wake-up
		 * per event costs the traced task several times the event itself, and asking how much
		 * data waits reads a cache line the reader keeps writing. */
		err = bpf_ringbuf_output(&tpkit_ringbuf, event, size, BPF_RB_NO_WAKEUP);
	if (err)
		tpkit_count(&tpkit_drops);
}

#endif
