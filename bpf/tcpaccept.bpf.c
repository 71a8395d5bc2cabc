/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every TCP connection a task accepts: at the return of accept() and accept4(), the socket of
 * the new descriptor, read from the task's file table with CO-RE. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/syscalls_accept.h>
#include <tpkit/tools/tcpaccept.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

static __always_inline void accepted(void *ctx, long fd)
{
	struct tcpaccept_event event = {};
	struct sock *sk;

	if (fd < 0 || !tpkit_current_selected())
		return;
	sk = tpkit_sock_of_fd(fd);
	if (!sk || !tpkit_sock_is_tcp(sk))
		return;
	tpkit_read_inet_tuple(sk, &event.tuple);
	if (!tpkit_inet_selected(&event.tuple))
		return;
	tpkit_fill_task_header(&event.task);
	tpkit_emit(ctx, &event, sizeof(event));
}

SEC("tracepoint/syscalls/sys_exit_accept")
int accept_exit(void *ctx)
{
	accepted(ctx, tpkit_sys_exit_accept_ret(ctx));
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int accept4_exit(void *ctx)
{
	accepted(ctx, tpkit_sys_exit_accept4_ret(ctx));
	return 0;
}
