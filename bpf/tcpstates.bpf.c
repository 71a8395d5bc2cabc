/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every TCP state change, with how long the socket spent in the state it leaves, from the raw
 * sock:inet_sock_set_state tracepoint (its socket read with CO-RE). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include <tpkit/tp/sock_raw.h>
#include <tpkit/tools/tcpstates.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");
/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

/* When each socket entered its current state, keyed by its address; forgotten at TCP_CLOSE. */
TPKIT_TIMING_MAP(__u64) state_since SEC(".maps");

SEC("raw_tp/inet_sock_set_state")
int state_change(struct bpf_raw_tracepoint_args *ctx)
{
	const struct sock *sk = tpkit_inet_sock_set_state_raw_sk(ctx);
	struct tcpstates_event event = {};
	__u64 key = (__u64)sk;

	if (!tpkit_sock_is_tcp(sk))
		return 0;
	tpkit_read_inet_tuple(sk, &event.tuple);
	if (!tpkit_inet_selected(&event.tuple))
		return 0;
	event.newstate = tpkit_inet_sock_set_state_raw_newstate(ctx);
	event.old_state_seen = tpkit_timing_elapsed(&state_since, &key, &event.old_state_ns);
	if (event.newstate != TCP_CLOSE)
		tpkit_timing_start(&state_since, &key, &tpkit_missed);
	if (!tpkit_current_selected())
		return 0;
	tpkit_fill_task_header(&event.task);
	event.skaddr = key;
	event.oldstate = tpkit_inet_sock_set_state_raw_oldstate(ctx);
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
