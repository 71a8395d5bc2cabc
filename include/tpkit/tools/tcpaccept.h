/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tcpaccept's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/tcpaccept.h>): largest fields first. */
#ifndef TPKIT_TCPACCEPT_H
#define TPKIT_TCPACCEPT_H

#include <tpkit/inet.h>
#include <tpkit/task.h>

struct tcpaccept_event {
	struct tpkit_task_header task; /* the task whose accept() returned the connection */
	struct tpkit_inet_tuple tuple; /* the accepted socket: local = the listening side */
};

#endif
