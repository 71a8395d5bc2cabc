/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every TCP session's end, with its task, addresses, bytes sent and received and life span,
 * from the raw sock:inet_sock_set_state tracepoint (the socket and its tcp_sock counters read
 * with CO-RE). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include <tpkit/tp/sock_raw.h>
#include <tpkit/tools/tcplife.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");
/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

/* When each session began, keyed by its socket's address. */
TPKIT_TIMING_MAP(__u64) births SEC(".maps");

/* Each session's task, keyed by its socket's address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TPKIT_TIMING_MAX_ENTRIES);
	__type(key, __u64);
	__type(value, struct tcplife_owner);
} owners SEC(".maps");

/* The changes a task makes itself, in process context: connect() (SYN_SENT), close() or
 * shutdown() first (FIN_WAIT1) or after the peer (LAST_ACK). The first of them names the
 * session's task; softirq changes run in whichever task a packet interrupted. */
static __always_inline bool made_by_owner(int newstate)
{
	return newstate == TCP_SYN_SENT || newstate == TCP_FIN_WAIT1 || newstate == TCP_LAST_ACK;
}

SEC("raw_tp/inet_sock_set_state")
int state_change(struct bpf_raw_tracepoint_args *ctx)
{
	const struct sock *sk = tpkit_inet_sock_set_state_raw_sk(ctx);
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;
	int newstate = tpkit_inet_sock_set_state_raw_newstate(ctx);
	struct tcplife_event event = {};
	struct tcplife_owner *owner;
	__u64 key = (__u64)sk;
	bool selected;

	if (!tpkit_sock_is_tcp(sk) || !tpkit_family_selected(BPF_CORE_READ(sk, __sk_common.skc_family)))
		return 0;
	if (newstate == TCP_SYN_SENT || newstate == TCP_SYN_RECV || newstate == TCP_ESTABLISHED) {
		__u64 now = bpf_ktime_get_ns();

		/* The first of them: a session begins once. */
		if (bpf_map_update_elem(&births, &key, &now, BPF_NOEXIST) && !bpf_map_lookup_elem(&births, &key))
			tpkit_count(&tpkit_missed);
	}
	if (made_by_owner(newstate) && !bpf_map_lookup_elem(&owners, &key)) {
		struct tcplife_owner named = {};

		tpkit_fill_task_header(&named.task);
		named.selected = tpkit_current_selected();
		if (bpf_map_update_elem(&owners, &key, &named, BPF_ANY))
			tpkit_count(&tpkit_missed);
	}
	if (newstate != TCP_CLOSE)
		return 0;

	/* Ports are complete only now: connect() picks the local one after SYN_SENT. */
	owner = bpf_map_lookup_elem(&owners, &key);
	if (owner) {
		event.task = owner->task;
		selected = owner->selected;
	} else {
		tpkit_fill_task_header(&event.task);
		selected = tpkit_current_selected();
	}
	bpf_map_delete_elem(&owners, &key);
	/* No birth: the session began before the tool started. */
	if (!tpkit_timing_elapsed(&births, &key, &event.span_ns) || !selected)
		return 0;
	tpkit_read_inet_tuple(sk, &event.tuple);
	if (!tpkit_inet_selected(&event.tuple))
		return 0;
	event.task.timestamp_ns = bpf_ktime_get_ns();
	/* Payload bytes, each once: bytes_acked and bytes_received count sequence space, which
	 * holds the SYN and FIN too. bytes_sent counts every transmission of data, retransmissions
	 * (bytes_retrans) included. bytes_received counts the peer's FIN once tcp_fin() took it,
	 * which marks the socket SOCK_DONE. */
	event.tx_bytes = BPF_CORE_READ(tp, bytes_sent) - BPF_CORE_READ(tp, bytes_retrans);
	event.rx_bytes = BPF_CORE_READ(tp, bytes_received);
	if (event.rx_bytes && (BPF_CORE_READ(sk, __sk_common.skc_flags) & (1UL << SOCK_DONE)))
		event.rx_bytes--;
	/* A passive socket that closes still in SYN_RECV, having carried nothing, never was a
	 * session: the copy that lost when two CPUs completed the same handshake at once (seen on
	 * 6.1 over IPv6, closed by ksoftirqd), which no application accepted. */
	if (tpkit_inet_sock_set_state_raw_oldstate(ctx) == TCP_SYN_RECV && !event.tx_bytes && !event.rx_bytes)
		return 0;
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
