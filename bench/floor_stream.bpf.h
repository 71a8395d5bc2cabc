/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The floor streamers' common part: a 40-byte event through a BPF ring buffer, waking the reader
 * for every event or never (the reader then consumes on a timer), or through a perf buffer;
 * optionally only one process, like a tool's -p. */
#ifndef TPBENCH_FLOOR_STREAM_BPF_H
#define TPBENCH_FLOOR_STREAM_BPF_H

#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 target_tgid = 0;
const volatile bool wakeup_each = false;
const volatile bool use_perf_buffer = false;

struct floor_event {
	__u64 timestamp_ns;
	__u64 pid_tgid;
	__u64 a, b, c;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline void floor_send(void *ctx, __u64 a, __u64 b, __u64 c)
{
	struct floor_event e;
	__u32 zero = 0;
	__u64 *dropped;

	e.pid_tgid = bpf_get_current_pid_tgid();
	if (target_tgid && (e.pid_tgid >> 32) != target_tgid)
		return;
	e.timestamp_ns = bpf_ktime_get_ns();
	e.a = a;
	e.b = b;
	e.c = c;
	/* Failures are counted here, for both buffers: the kernel reports a perf buffer's lost
	 * samples only with the next sample that fits, so after the last one they go unreported. */
	if (use_perf_buffer ? bpf_perf_event_output(ctx, &perf, BPF_F_CURRENT_CPU, &e, sizeof(e))
			    : bpf_ringbuf_output(&ring, &e, sizeof(e),
						 wakeup_each ? 0 : BPF_RB_NO_WAKEUP)) {
		dropped = bpf_map_lookup_elem(&drops, &zero);
		if (dropped)
			*dropped += 1;
	}
}

#endif
