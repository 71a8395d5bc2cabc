/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A socket's addresses and ports as the TCP tools' events carry them (tpkit_read_inet_tuple in
 * inet.bpf.h), shared by BPF programs and user space (tpkit::address_text in inet.hpp). Plain C,
 * largest fields first. */
#ifndef TPKIT_INET_H
#define TPKIT_INET_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif

/* -L, -D, -P: how many ports one option may list. */
#define TPKIT_MAX_PORTS 8

struct tpkit_inet_tuple {
	__u8 saddr[16]; /* local address: IPv4 in the first 4 bytes, IPv6 (v4-mapped too) in all */
	__u8 daddr[16]; /* remote address, the same way */
	__u16 family;   /* AF_INET or AF_INET6 */
	__u16 sport;    /* local port, host order */
	__u16 dport;    /* remote port, host order */
	__u16 reserved;
};

#endif
