/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TCP sockets as the TCP tools read them: a struct sock's addresses and ports (CO-RE), and the
 * filters -4, -6, local and remote ports, as rodata that user space sets before load
 * (tpkit::apply_inet_filter in include/tpkit/run/inet.hpp). Unset filters cost nothing: the
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

/* The family, remote port (host order) and addresses of a struct sock_common: a full socket's
 * (sk->__sk_common) and a request socket's (req->__req_common) alike. */
static __always_inline void tpkit_read_common_tuple(const struct sock_common *c, struct tpkit_inet_tuple *t)
{
	t->family = BPF_CORE_READ(c, skc_family);
	t->dport = bpf_ntohs(BPF_CORE_READ(c, skc_dport));
	if (t->family == AF_INET) {
		BPF_CORE_READ_INTO((__u32 *)t->saddr, c, skc_rcv_saddr);
		BPF_CORE_READ_INTO((__u32 *)t->daddr, c, skc_daddr);
		return;
	}
	BPF_CORE_READ_INTO(&t->saddr, c, skc_v6_rcv_saddr.in6_u.u6_addr8);
	BPF_CORE_READ_INTO(&t->daddr, c, skc_v6_daddr.in6_u.u6_addr8);
}

/* A connection that has only a request socket yet (a SYN answered, its SYN-ACK unacknowledged):
 * its local port is the request's skc_num (ir_num), as the kernel's tcp_retransmit_synack record
 * has it. */
static __always_inline void tpkit_read_request_tuple(const struct request_sock *req,
						     struct tpkit_inet_tuple *t)
{
	tpkit_read_common_tuple(&req->__req_common, t);
	t->sport = BPF_CORE_READ(req, __req_common.skc_num);
}

/* sk's family, ports (host order) and addresses. The local port is inet_sport, as the kernel's
 * inet_sock_set_state record has it: 0 before connect() picks one, and still there at TCP_CLOSE,
 * where the socket has already given its bound port (skc_num) back. */
static __always_inline void tpkit_read_inet_tuple(const struct sock *sk, struct tpkit_inet_tuple *t)
{
	__u32 *saddr_words = (__u32 *)t->saddr;

	tpkit_read_common_tuple(&sk->__sk_common, t);
	t->sport = bpf_ntohs(BPF_CORE_READ((const struct inet_sock *)sk, inet_sport));
	if (t->family == AF_INET)
		return;
	/* An IPv6 socket connecting to a v4-mapped address: tcp_v6_connect() writes the mapped
	 * local address only once tcp_v4_connect() has returned, after the SYN_SENT change; the
	 * IPv4 one is there already. */
	if (tpkit_v4_mapped(t->daddr) && !saddr_words[0] && !saddr_words[1] && !saddr_words[2] &&
	    !saddr_words[3]) {
		saddr_words[2] = bpf_htonl(0x0000ffff);
		BPF_CORE_READ_INTO(&saddr_words[3], sk, __sk_common.skc_rcv_saddr);
	}
}

/* A TCP segment's addresses and ports as its headers in an sk_buff say (skb->head +
 * network_header, CO-RE): saddr and sport are the packet's source. IPv4, or IPv6 with TCP as the
 * next header (no extension headers); false for anything else, or when the skb has no network
 * header yet. The TCP flags byte into *flags. The version and IPv4 header length come from the
 * header's first byte, not iphdr's bitfields. */
static __always_inline bool tpkit_read_skb_tcp_tuple(const struct sk_buff *skb, struct tpkit_inet_tuple *t,
						     __u8 *flags)
{
	const unsigned char *head = BPF_CORE_READ(skb, head);
	__u16 network = BPF_CORE_READ(skb, network_header);
	const unsigned char *transport;
	__u8 first = 0, tcp[14];

	if (network == (__u16)~0U || bpf_probe_read_kernel(&first, 1, head + network))
		return false;
	if (first >> 4 == 4) {
		struct iphdr ip;

		if (bpf_probe_read_kernel(&ip, sizeof(ip), head + network) || ip.protocol != IPPROTO_TCP)
			return false;
		t->family = AF_INET;
		__builtin_memcpy(t->saddr, &ip.saddr, 4);
		__builtin_memcpy(t->daddr, &ip.daddr, 4);
		transport = head + network + (first & 0x0f) * 4;
	} else if (first >> 4 == 6) {
		struct ipv6hdr ip6;

		if (bpf_probe_read_kernel(&ip6, sizeof(ip6), head + network) || ip6.nexthdr != IPPROTO_TCP)
			return false;
		t->family = AF_INET6;
		__builtin_memcpy(t->saddr, &ip6.saddr, 16);
		__builtin_memcpy(t->daddr, &ip6.daddr, 16);
		transport = head + network + sizeof(ip6);
	} else {
		return false;
	}
	if (bpf_probe_read_kernel(tcp, sizeof(tcp), transport))
		return false;
	t->sport = (__u16)tcp[0] << 8 | tcp[1];
	t->dport = (__u16)tcp[2] << 8 | tcp[3];
	*flags = tcp[13];
	return true;
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
