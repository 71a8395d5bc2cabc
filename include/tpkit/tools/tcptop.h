/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tcptop's key and counters, shared by its BPF program and user space (installed for embedders
 * as <tpkit/tools/tcptop.h>). */
#ifndef TPKIT_TCPTOP_H
#define TPKIT_TCPTOP_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/inet.h>
#include <tpkit/limits.h>

/* A connection as the process that sends or receives on it sees it. */
struct tcptop_key {
	struct tpkit_inet_tuple tuple;
	__u32 pid; /* the process (tgid) */
	char comm[TPKIT_COMM_LEN];
};

struct tcptop_counts {
	__u64 sent;     /* bytes the sends returned */
	__u64 received; /* bytes the receives returned (peeks aside) */
};

#endif
