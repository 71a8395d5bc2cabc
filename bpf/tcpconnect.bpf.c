/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every active TCP open: connect() moves its socket from TCP_CLOSE to TCP_SYN_SENT in the
 * calling task, at the raw sock:inet_sock_set_state tracepoint (the socket read with CO-RE).
 * Refused and timed-out connects are opens too, as bcc counts them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/sock_raw.h>
#include <tpkit/tools/tcpconnect.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

SEC("raw_tp/inet_sock_set_state")
int connect_start(struct bpf_raw_tracepoint_args *ctx)
{
	const struct sock *sk = tpkit_inet_sock_set_state_raw_sk(ctx);
	struct tcpconnect_event event = {};

	if (tpkit_inet_sock_set_state_raw_newstate(ctx) != TCP_SYN_SENT ||
	    tpkit_inet_sock_set_state_raw_oldstate(ctx) != TCP_CLOSE || !tpkit_sock_is_tcp(sk))
		return 0;
	tpkit_read_inet_tuple(sk, &event.tuple);
	if (!tpkit_inet_selected(&event.tuple) || !tpkit_current_selected())
		return 0;
	tpkit_fill_task_header(&event.task);
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
