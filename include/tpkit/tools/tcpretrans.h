/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tcpretrans' event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/tcpretrans.h>): largest fields first. */
#ifndef TPKIT_TCPRETRANS_H
#define TPKIT_TCPRETRANS_H

#include <tpkit/inet.h>
#include <tpkit/task.h>

#define TCPRETRANS_SEGMENT 1 /* tcp:tcp_retransmit_skb: a segment sent again (R>) */
#define TCPRETRANS_SYNACK 2  /* tcp:tcp_retransmit_synack: a SYN-ACK sent again (S>) */

struct tcpretrans_event {
	/* The task running when the kernel retransmitted: mostly whichever one the retransmit
	 * timer interrupted (bcc's PID column means the same). */
	struct tpkit_task_header task;
	__u64 skaddr; /* the socket's kernel address (the request socket's for a SYN-ACK) */
	struct tpkit_inet_tuple tuple;
	__s32 state;  /* TCP_ESTABLISHED ... TCP_NEW_SYN_RECV */
	__u32 kind;   /* TCPRETRANS_SEGMENT or TCPRETRANS_SYNACK */
	__u32 seq;    /* the segment's first sequence number; a SYN-ACK's: the server's ISN */
	__s32 err;    /* 0: sent; else the kernel's error (-EBUSY: the original still queued) */
};

#endif
