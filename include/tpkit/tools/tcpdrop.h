/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tcpdrop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/tcpdrop.h>): largest fields first. */
#ifndef TPKIT_TCPDROP_H
#define TPKIT_TCPDROP_H

#include <tpkit/inet.h>
#include <tpkit/task.h>

/* Frames kept per kernel stack (-s). */
#define TCPDROP_MAX_STACK_DEPTH 127
/* No stack taken (without -s); other negative IDs are bpf_get_stackid()'s -errno. */
#define TCPDROP_NO_STACK (-1)
/* No socket with the segment (skb->sk NULL): STATE "-". */
#define TCPDROP_NO_STATE (-1)

struct tcpdrop_event {
	/* The task running when the kernel dropped the segment (in softirq context, whichever
	 * task the packet interrupted). */
	struct tpkit_task_header task;
	/* From the segment's own headers: saddr and sport are its source (the sender's), daddr
	 * and dport its destination. */
	struct tpkit_inet_tuple tuple;
	__u32 reason;          /* enum skb_drop_reason: its numbers differ between kernels */
	__s32 state;           /* skb->sk's TCP state, or TCPDROP_NO_STATE */
	__s32 kernel_stack_id; /* in the stacks map, or TCPDROP_NO_STACK, or -errno */
	__u8 tcp_flags;        /* the TCP header's flags byte (FIN 0x01 ... CWR 0x80) */
	__u8 reserved[3];
};

#endif
