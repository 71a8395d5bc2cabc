/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every TCP segment the kernel drops, with the kernel's drop reason, from the raw tracepoint
 * kfree_skb: the segment's addresses and ports from its own headers, the state of the socket it
 * belongs to when it has one, and with -s the kernel stack that dropped it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/stack.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/skb_raw.h>
#include <tpkit/tools/tcpdrop.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

/* Also NOT_SPECIFIED and what is not a drop (SKB_CONSUMED, SKB_NOT_DROPPED_YET). */
const volatile bool all_reasons = false;
const volatile bool kernel_stacks = false;

TPKIT_STACK_MAP(TCPDROP_MAX_STACK_DEPTH) stacks SEC(".maps");

SEC("raw_tp/kfree_skb")
int skb_dropped(struct bpf_raw_tracepoint_args *ctx)
{
	const struct sk_buff *skb = tpkit_kfree_skb_raw_skb(ctx);
	__u32 reason = tpkit_kfree_skb_raw_reason(ctx);
	struct tcpdrop_event event = {};
	const struct sock *sk;

	/* The enum's numbers move between kernels (NOT_SPECIFIED is 1 on 6.1, 2 on 6.18, after
	 * SKB_CONSUMED): libbpf takes this one from the running kernel's BTF. */
	if (!all_reasons && reason <= bpf_core_enum_value(enum skb_drop_reason, SKB_DROP_REASON_NOT_SPECIFIED))
		return 0;
	if (!tpkit_read_skb_tcp_tuple(skb, &event.tuple, &event.tcp_flags) ||
	    !tpkit_inet_selected(&event.tuple) || !tpkit_current_selected())
		return 0;
	sk = BPF_CORE_READ(skb, sk);
	event.state = sk ? BPF_CORE_READ(sk, __sk_common.skc_state) : TCPDROP_NO_STATE;
	event.reason = reason;
	event.kernel_stack_id = kernel_stacks ? bpf_get_stackid(ctx, &stacks, 0) : TCPDROP_NO_STACK;
	tpkit_fill_task_header(&event.task);
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
