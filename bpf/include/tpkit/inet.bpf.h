/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TCP sockets as the TCP tools read them: a struct sock's addresses and ports (CO-RE), and the
 * filters -4, -6, local and remote ports, as rodata that user space sets before load
 * (tpkit::apply_inet_filter in include/tpkit/inet.hpp). Unset filters cost nothing: the
 * verifier drops their checks. Include vmlinux.h first. */
#ifndef TPKIT_INET_BPF_H
#define TPKIT_INET_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <tpkit/inet.h>

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

const volatile __u16 tpkit_target_family = 0; /* AF_INET or AF_INET6, 0: both */
/* Ports a socket's local (remote) port must be one of; none listed: any port. */
const volatile __u16 tpkit_target_lports[TPKIT_MAX_PORTS] = {};
const volatile __u16 tpkit_target_rports[TPKIT_MAX_PORTS] = {};

#define TPKIT_S_IFMT 00170000
#define TPKIT_S_IFSOCK 0140000

/* The struct sock behind the current task's descriptor fd (its file table read with CO-RE), or
 * NULL when fd is not open or not a socket: the descriptor a syscall was given may be anything,
 * and only a socket file's private_data is a struct socket. */
static __always_inline struct sock *tpkit_sock_of_fd(long fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *file = NULL;
	struct socket *socket;

	if (fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	if (!file || (BPF_CORE_READ(file, f_inode, i_mode) & TPKIT_S_IFMT) != TPKIT_S_IFSOCK)
		return NULL;
	socket = BPF_CORE_READ(file, private_data);
	return BPF_CORE_READ(socket, sk);
}

static __always_inline bool tpkit_sock_is_tcp(const struct sock *sk)
{
	return BPF_CORE_READ(sk, sk_protocol) == IPPROTO_TCP;
}

static __always_inline bool tpkit_v4_mapped(const __u8 *a)
{
	const __u32 *words = (const __u32 *)a;

	return words[0] == 0 && words[1] == 0 && words[2] == bpf_htonl(0x0000ffff);
}

/* sk's family, ports (host order) and addresses. The local port is inet_sport, as the kernel's
 * inet_sock_set_state record has it: 0 before connect() picks one, and still there at TCP_CLOSE,
 * where the socket has already given its bound port (skc_num) back. */
static __always_inline void tpkit_read_inet_tuple(const struct sock *sk, struct tpkit_inet_tuple *t)
{
	__u32 *saddr_words = (__u32 *)t->saddr;

	t->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	t->sport = bpf_ntohs(BPF_CORE_READ((const struct inet_sock *)sk, inet_sport));
	t->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (t->family == AF_INET) {
		BPF_CORE_READ_INTO((__u32 *)t->saddr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO((__u32 *)t->daddr, sk, __sk_common.skc_daddr);
		return;
	}
	BPF_CORE_READ_INTO(&t->saddr, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
	BPF_CORE_READ_INTO(&t->daddr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	/* An IPv6 socket connecting to a v4-mapped address: tcp_v6_connect() writes the mapped
	 * local address only once tcp_v4_connect() has returned, after the SYN_SENT change; the
	 * IPv4 one is there already. */
	if (tpkit_v4_mapped(t->daddr) && !saddr_words[0] && !saddr_words[1] && !saddr_words[2] &&
	    !saddr_words[3]) {
		saddr_words[2] = bpf_htonl(0x0000ffff);
		BPF_CORE_READ_INTO(&saddr_words[3], sk, __sk_common.skc_rcv_saddr);
	}
}

static __always_inline bool tpkit_port_listed(__u16 port, const volatile __u16 *ports)
{
#pragma unroll
	for (int i = 0; i < TPKIT_MAX_PORTS; i++) {
		if (!ports[i])
			return false;
		if (ports[i] == port)
			return true;
	}
	return false;
}

/* Whether a family alone passes -4 / -6 (before reading the rest of a socket). */
static __always_inline bool tpkit_family_selected(__u16 family)
{
	if (family != AF_INET && family != AF_INET6)
		return false;
	return !tpkit_target_family || family == tpkit_target_family;
}

/* Whether a tuple passes the family and port filters. */
static __always_inline bool tpkit_inet_selected(const struct tpkit_inet_tuple *t)
{
	if (!tpkit_family_selected(t->family))
		return false;
	if (tpkit_target_lports[0] && !tpkit_port_listed(t->sport, tpkit_target_lports))
		return false;
	if (tpkit_target_rports[0] && !tpkit_port_listed(t->dport, tpkit_target_rports))
		return false;
	return true;
}

#endif
