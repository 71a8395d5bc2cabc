/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tcpconnect's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/tcpconnect.h>): largest fields first. */
#ifndef TPKIT_TCPCONNECT_H
#define TPKIT_TCPCONNECT_H

#include <tpkit/inet.h>
#include <tpkit/task.h>

struct tcpconnect_event {
	struct tpkit_task_header task; /* the task calling connect(); timestamp_ns: its SYN_SENT */
	/* The local port is not chosen yet (0) when connect() moves to SYN_SENT. */
	struct tpkit_inet_tuple tuple;
};

#endif
