/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* bindsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/bindsnoop.h>): largest fields first. */
#ifndef TPKIT_BINDSNOOP_H
#define TPKIT_BINDSNOOP_H

#include <tpkit/inet.h>
#include <tpkit/task.h>

/* The socket's options, bits in the order of bcc's OPTS letters (FTNRr). */
#define BINDSNOOP_FREEBIND 0x01             /* F: IP_FREEBIND */
#define BINDSNOOP_TRANSPARENT 0x02          /* T: IP_TRANSPARENT */
#define BINDSNOOP_BIND_ADDRESS_NO_PORT 0x04 /* N: IP_BIND_ADDRESS_NO_PORT */
#define BINDSNOOP_REUSEADDR 0x08            /* R: SO_REUSEADDR */
#define BINDSNOOP_REUSEPORT 0x10            /* r: SO_REUSEPORT */

struct bindsnoop_event {
	struct tpkit_task_header task; /* the task calling bind(); timestamp_ns: its return */
	/* family: the socket's; saddr: the address asked for; sport: the port bound (the one the
	 * kernel chose for port 0), or asked for when the bind failed; no remote side. */
	struct tpkit_inet_tuple tuple;
	__s32 ret;             /* bind()'s result: 0 or -errno */
	__u32 bound_dev_if;    /* the interface the socket is bound to (SO_BINDTODEVICE); 0: none */
	__u16 protocol;        /* IPPROTO_TCP, IPPROTO_UDP, ... */
	__u8 options;          /* BINDSNOOP_* */
	__u8 reserved[5];
};

#endif
