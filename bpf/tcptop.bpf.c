/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TCP bytes sent and received per process and connection, drained every interval, from the raw
 * tracepoints sock:sock_send_length and sock:sock_recv_length (Linux 6.3+): sock_sendmsg() and
 * sock_recvmsg() fire them for every socket, whatever its family, with what the call returned
 * (a negative errno on failure). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/sock_length_raw.h>
#include <tpkit/tools/tcptop.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TCPTOP_MSG_PEEK 2
#define TCPTOP_SOCK_STREAM 1

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

/* Up to 10,240 connections an interval: one copy every CPU shares (atomic adds), as a per-CPU
 * one of 60-byte keys would cost every CPU its own. */
TPKIT_SWAPPED_HALF(counts, BPF_MAP_TYPE_HASH, struct tcptop_key, struct tcptop_counts)
	counts_a SEC(".maps"), counts_b SEC(".maps");
TPKIT_SWAPPED_SLOT(counts) counts SEC(".maps");
TPKIT_ZERO_VALUE(struct tcptop_counts) zero_counts SEC(".maps");

static __always_inline void count_bytes(const struct sock *sk, int ret, bool received)
{
	struct tcptop_key key = {};
	struct tcptop_counts *c;
	__u16 family;
	void *active;

	/* A failure (negative errno) or nothing moved (end of stream). */
	if (ret <= 0 || !sk)
		return;
	/* TCP alone: a raw socket of IPPROTO_TCP is no stream, MPTCP has a protocol of its own. */
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if ((family != AF_INET && family != AF_INET6) || !tpkit_sock_is_tcp(sk) ||
	    BPF_CORE_READ(sk, sk_type) != TCPTOP_SOCK_STREAM)
		return;
	if (!tpkit_current_selected())
		return;
	tpkit_read_inet_tuple(sk, &key.tuple);
	if (!tpkit_inet_selected(&key.tuple))
		return;
	key.pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	active = TPKIT_ACTIVE_MAP(counts);
	c = active ? tpkit_lookup_or_zero(active, &key, &zero_counts, &tpkit_missed) : NULL;
	if (!c)
		return;
	if (received)
		__sync_fetch_and_add(&c->received, ret);
	else
		__sync_fetch_and_add(&c->sent, ret);
}

SEC("raw_tp/sock_send_length")
int sock_sent(struct bpf_raw_tracepoint_args *ctx)
{
	count_bytes(tpkit_sock_send_length_raw_sk(ctx), tpkit_sock_send_length_raw_ret(ctx), false);
	return 0;
}

SEC("raw_tp/sock_recv_length")
int sock_received(struct bpf_raw_tracepoint_args *ctx)
{
	/* A peek leaves the bytes queued: the receive that takes them counts them, once. */
	if (tpkit_sock_recv_length_raw_flags(ctx) & TCPTOP_MSG_PEEK)
		return 0;
	count_bytes(tpkit_sock_recv_length_raw_sk(ctx), tpkit_sock_recv_length_raw_ret(ctx), true);
	return 0;
}
