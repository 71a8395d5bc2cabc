/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* biosnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/biosnoop.h>): largest fields first. */
#ifndef TPKIT_BIOSNOOP_H
#define TPKIT_BIOSNOOP_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/limits.h>

/* queued_ns of a request that was issued without being queued first. */
#define BIOSNOOP_NOT_QUEUED ((__u64)-1)

/* One completion of a request (a request completed in parts gives one per part). */
struct biosnoop_event {
	__u64 timestamp_ns; /* the completion */
	__u64 sector;       /* its first sector (512 bytes) */
	__u64 latency_ns;   /* from the issue to the device */
	__u64 queued_ns;    /* from its insertion into a queue to the issue */
	/* The task that submitted it. */
	__u32 pid;
	__u32 tid;
	__u32 dev;   /* the disk's dev_t */
	__u32 bytes; /* completed */
	__u32 op;    /* TPKIT_REQ_OP_* */
	__u32 flags; /* TPKIT_REQ_* */
	char comm[TPKIT_COMM_LEN];
};

#endif
