/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every listen() on a TCP socket, with its backlog and result: the entry keeps the descriptor
 * and backlog, the raw sock:inet_sock_set_state tracepoint names the socket the call moves to
 * TCP_LISTEN, and the return reads that socket (CO-RE) and sends the event. A call that changes
 * no state (a listening socket's new backlog, a refused one) is read through the descriptor.
 * listen() is followed at syscalls:sys_enter_listen/sys_exit_listen rather than raw_syscalls:
 * those run for listen() alone, raw_syscalls for every system call of every task. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/call.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/sock_raw.h>
#include <tpkit/tp/syscalls_listen.h>
#include <tpkit/tools/solisten.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

#define LISTEN_CALL 1

struct listen_call {
	struct tpkit_call call;
	struct sock *sk; /* the socket the call moved to TCP_LISTEN; NULL: none yet */
	__s32 fd;
	__s32 backlog;
};

TPKIT_CALL_MAP(struct listen_call) listen_calls SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_listen")
int listen_entry(void *ctx)
{
	struct listen_call *c;

	if (!tpkit_current_selected())
		return 0;
	c = tpkit_call_enter(&listen_calls, LISTEN_CALL, &tpkit_drops);
	if (!c)
		return 0;
	c->sk = NULL;
	c->fd = (__s32)tpkit_sys_enter_listen_fd(ctx);
	c->backlog = (__s32)tpkit_sys_enter_listen_backlog(ctx);
	return 0;
}

SEC("raw_tp/inet_sock_set_state")
int listen_state(struct bpf_raw_tracepoint_args *ctx)
{
	struct listen_call *c;

	if (tpkit_inet_sock_set_state_raw_newstate(ctx) != TCP_LISTEN)
		return 0;
	c = tpkit_call_current(&listen_calls, LISTEN_CALL);
	if (c)
		c->sk = (struct sock *)tpkit_inet_sock_set_state_raw_sk(ctx);
	return 0;
}

/* The backlog __sys_listen() passes on: above the socket's namespace's net.core.somaxconn
 * (negative ones too, compared unsigned) it is somaxconn. */
static __always_inline __s32 backlog_taken(const struct sock *sk, __s32 backlog)
{
	__u32 somaxconn = BPF_CORE_READ(sk, __sk_common.skc_net.net, core.sysctl_somaxconn);

	return (__u32)backlog > somaxconn ? (__s32)somaxconn : backlog;
}

SEC("tracepoint/syscalls/sys_exit_listen")
int listen_exit(void *ctx)
{
	struct solisten_event event = {};
	struct listen_call *c;
	struct sock *sk;

	c = tpkit_call_return(&listen_calls, LISTEN_CALL);
	if (!c)
		return 0;
	sk = c->sk ? c->sk : tpkit_sock_of_fd(c->fd);
	/* Only TCP sockets reach inet_listen(), where bcc's solisten looks. */
	if (!sk || !tpkit_sock_is_tcp(sk))
		return 0;
	tpkit_read_inet_tuple(sk, &event.tuple);
	if (!tpkit_inet_selected(&event.tuple))
		return 0;
	event.ret = (__s32)tpkit_sys_exit_listen_ret(ctx);
	event.backlog = backlog_taken(sk, c->backlog);
	tpkit_fill_task_header(&event.task);
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
