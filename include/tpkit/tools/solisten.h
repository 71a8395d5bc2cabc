/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* solisten's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/solisten.h>): largest fields first. */
#ifndef TPKIT_SOLISTEN_H
#define TPKIT_SOLISTEN_H

#include <tpkit/inet.h>
#include <tpkit/task.h>

struct solisten_event {
	struct tpkit_task_header task; /* the task calling listen(); timestamp_ns: its return */
	struct tpkit_inet_tuple tuple; /* the socket after the call: its local address and port */
	__s32 ret;                     /* listen()'s result: 0 or -errno */
	__s32 backlog;                 /* as the kernel took it: the call's, at most net.core.somaxconn */
};

#endif
