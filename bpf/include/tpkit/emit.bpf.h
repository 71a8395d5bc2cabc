/* Event transport shared by every streaming BPF program: a BPF ring buffer by default, a perf
 * buffer when the kernel has no ring buffer or the user asks for it (user space decides before
 * load through tpkit_use_perf_buffer). Ring-buffer records that do not fit are counted in a
 * per-CPU drop counter, where they happen; the perf buffer reports its own lost samples. */
#ifndef TPKIT_EMIT_BPF_H
#define TPKIT_EMIT_BPF_H

#include <bpf/bpf_helpers.h>

const volatile bool tpkit_use_perf_buffer = false;
/* Wake the reader only once this much data waits; it also consumes on a short timer, so
 * small bursts reach the screen quickly without a wake-up per event. */
const volatile __u64 tpkit_wakeup_bytes = 256 * 1024;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} tpkit_ringbuf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} tpkit_perfbuf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} tpkit_drops SEC(".maps");

static __always_inline void tpkit_count_drop(void)
{
	__u32 zero = 0;
	__u64 *drops = bpf_map_lookup_elem(&tpkit_drops, &zero);

	if (drops)
		*drops += 1;
}

static __always_inline void tpkit_emit(void *ctx, void *event, __u64 size)
{
	__u64 flags;

	if (tpkit_use_perf_buffer) {
		bpf_perf_event_output(ctx, &tpkit_perfbuf, BPF_F_CURRENT_CPU, event, size);
		return;
	}
	flags = bpf_ringbuf_query(&tpkit_ringbuf, BPF_RB_AVAIL_DATA) >= tpkit_wakeup_bytes
			? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&tpkit_ringbuf, event, size, flags))
		tpkit_count_drop();
}

#endif
