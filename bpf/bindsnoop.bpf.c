/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every bind() of an IPv4 or IPv6 socket (where bcc's bindsnoop looks: inet_bind, inet6_bind),
 * from its syscall tracepoints: the entry reads the address asked for from user memory and finds
 * the socket behind the descriptor in the task's file table (CO-RE), the return reads the
 * socket's protocol, options and port and sends the event. Other families (AF_UNIX, ...) are
 * left out at the entry. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/call.bpf.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/syscalls_bind.h>
#include <tpkit/tools/bindsnoop.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

#define BIND_CALL 1

const volatile bool include_failed = false; /* -x */

struct bind_call {
	struct tpkit_call call;
	struct sock *sk;
	__u8 addr[16];
	__u16 family;
	__u16 port;
};

TPKIT_CALL_MAP(struct bind_call) bind_calls SEC(".maps");

/* The address and port of a struct sockaddr_in (sockaddr_in6) of `len` bytes at user address
 * `sa`, as far as it holds them: the port at byte 2, the address at byte 4 (8). */
static __always_inline void read_sockaddr(struct bind_call *c, const __u8 *sa, int len)
{
	__be16 port = 0;

	__builtin_memset(c->addr, 0, sizeof(c->addr));
	if (len >= 4)
		bpf_probe_read_user(&port, sizeof(port), sa + 2);
	c->port = bpf_ntohs(port);
	if (c->family == AF_INET && len >= 8)
		bpf_probe_read_user(c->addr, 4, sa + 4);
	else if (c->family == AF_INET6 && len >= 24)
		bpf_probe_read_user(c->addr, 16, sa + 8);
}

SEC("tracepoint/syscalls/sys_enter_bind")
int bind_entry(void *ctx)
{
	struct bind_call *c;
	struct sock *sk;
	__u16 family;

	if (!tpkit_current_selected())
		return 0;
	sk = tpkit_sock_of_fd((int)tpkit_sys_enter_bind_fd(ctx));
	if (!sk)
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return 0;
	c = tpkit_call_enter(&bind_calls, BIND_CALL, &tpkit_drops);
	if (!c)
		return 0;
	c->sk = sk;
	c->family = family;
	read_sockaddr(c, (const __u8 *)tpkit_sys_enter_bind_umyaddr(ctx),
		      (int)tpkit_sys_enter_bind_addrlen(ctx));
	return 0;
}

static __always_inline __u8 bind_options(struct sock *sk)
{
	__u32 inet = tpkit_inet_bind_options(sk);
	__u8 options = 0;

	if (inet & TPKIT_INET_FREEBIND)
		options |= BINDSNOOP_FREEBIND;
	if (inet & TPKIT_INET_TRANSPARENT)
		options |= BINDSNOOP_TRANSPARENT;
	if (inet & TPKIT_INET_BIND_ADDRESS_NO_PORT)
		options |= BINDSNOOP_BIND_ADDRESS_NO_PORT;
	if (BPF_CORE_READ_BITFIELD_PROBED(sk, __sk_common.skc_reuse))
		options |= BINDSNOOP_REUSEADDR;
	if (BPF_CORE_READ_BITFIELD_PROBED(sk, __sk_common.skc_reuseport))
		options |= BINDSNOOP_REUSEPORT;
	return options;
}

SEC("tracepoint/syscalls/sys_exit_bind")
int bind_exit(void *ctx)
{
	struct bindsnoop_event event = {};
	__s32 ret = (__s32)tpkit_sys_exit_bind_ret(ctx);
	struct bind_call *c;
	struct sock *sk;

	c = tpkit_call_return(&bind_calls, BIND_CALL);
	if (!c || (ret && !include_failed))
		return 0;
	sk = c->sk;
	event.tuple.family = c->family;
	__builtin_memcpy(event.tuple.saddr, c->addr, sizeof(event.tuple.saddr));
	/* A bound socket's port is the one asked for, or the kernel's choice for port 0. */
	event.tuple.sport = ret ? c->port : bpf_ntohs(BPF_CORE_READ((struct inet_sock *)sk, inet_sport));
	if (!tpkit_inet_selected(&event.tuple))
		return 0;
	event.ret = ret;
	event.protocol = BPF_CORE_READ(sk, sk_protocol);
	event.bound_dev_if = BPF_CORE_READ(sk, __sk_common.skc_bound_dev_if);
	event.options = bind_options(sk);
	tpkit_fill_task_header(&event.task);
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
