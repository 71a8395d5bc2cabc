/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every TCP retransmit, from the raw tracepoints tcp_retransmit_skb (segments, SYNs included)
 * and tcp_retransmit_synack (SYN-ACKs of connections that have only a request socket yet): the
 * socket's addresses, ports and state read with CO-RE. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/tcp_raw.h>
#include <tpkit/tools/tcpretrans.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

/* Also the retransmits that failed (--failed): by default only what the kernel sent, which is
 * what it counts in TcpRetransSegs. */
const volatile bool tcpretrans_failed_too = false;

static __always_inline void emit_if_selected(void *ctx, struct tcpretrans_event *event)
{
	if (!tpkit_inet_selected(&event->tuple) || !tpkit_current_selected())
		return;
	tpkit_fill_task_header(&event->task);
	tpkit_emit(ctx, event, sizeof(*event));
}

SEC("raw_tp/tcp_retransmit_skb")
int retransmit_skb(struct bpf_raw_tracepoint_args *ctx)
{
	const struct sock *sk = tpkit_tcp_retransmit_skb_raw_sk(ctx);
	const struct sk_buff *skb = tpkit_tcp_retransmit_skb_raw_skb(ctx);
	/* TCP_SKB_CB(skb): the control block TCP keeps in skb->cb. */
	const struct tcp_skb_cb *cb = (const struct tcp_skb_cb *)skb->cb;
	struct tcpretrans_event event = {};

	event.err = tpkit_tcp_retransmit_skb_err((__u64 *)ctx->args);
	if (event.err && !tcpretrans_failed_too)
		return 0;
	tpkit_read_inet_tuple(sk, &event.tuple);
	event.skaddr = (__u64)sk;
	event.state = BPF_CORE_READ(sk, __sk_common.skc_state);
	event.kind = TCPRETRANS_SEGMENT;
	event.seq = BPF_CORE_READ(cb, seq);
	emit_if_selected(ctx, &event);
	return 0;
}

SEC("raw_tp/tcp_retransmit_synack")
int retransmit_synack(struct bpf_raw_tracepoint_args *ctx)
{
	const struct request_sock *req = tpkit_tcp_retransmit_synack_raw_req(ctx);
	struct tcpretrans_event event = {};

	tpkit_read_request_tuple(req, &event.tuple);
	event.skaddr = (__u64)req;
	event.state = BPF_CORE_READ(req, __req_common.skc_state);
	event.kind = TCPRETRANS_SYNACK;
	event.seq = BPF_CORE_READ((const struct tcp_request_sock *)req, snt_isn);
	emit_if_selected(ctx, &event);
	return 0;
}
