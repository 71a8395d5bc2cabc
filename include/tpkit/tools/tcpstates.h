/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tcpstates' event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/tcpstates.h>): largest fields first. */
#ifndef TPKIT_TCPSTATES_H
#define TPKIT_TCPSTATES_H

#include <tpkit/inet.h>
#include <tpkit/task.h>

struct tcpstates_event {
	/* The task running when the state changed (in softirq context, whichever task the
	 * packet interrupted); timestamp_ns is the change. */
	struct tpkit_task_header task;
	__u64 skaddr;        /* the struct sock's kernel address */
	__u64 old_state_ns;  /* how long the socket was in oldstate, when that change was seen */
	struct tpkit_inet_tuple tuple;
	__s32 oldstate;      /* TCP_ESTABLISHED ... TCP_NEW_SYN_RECV */
	__s32 newstate;
	__u32 old_state_seen; /* whether old_state_ns is known (the change into oldstate was seen) */
	__u32 reserved;
};

#endif
