/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tcplife's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/tcplife.h>): largest fields first. */
#ifndef TPKIT_TCPLIFE_H
#define TPKIT_TCPLIFE_H

#include <tpkit/inet.h>
#include <tpkit/task.h>

struct tcplife_event {
	/* The task the session belongs to: the one that connected, else the one that closed
	 * it, else the one running when it ended. timestamp_ns is the end (TCP_CLOSE). */
	struct tpkit_task_header task;
	__u64 span_ns;  /* from the socket's first SYN_SENT, SYN_RECV or ESTABLISHED to its close */
	__u64 tx_bytes; /* payload bytes sent, retransmissions counted once */
	__u64 rx_bytes; /* payload bytes received in sequence */
	struct tpkit_inet_tuple tuple;
};

/* A session's task, kept from the change that names it until its close. */
struct tcplife_owner {
	struct tpkit_task_header task;
	__u32 selected; /* whether that task passed the task filters */
	__u32 reserved;
};

#endif
