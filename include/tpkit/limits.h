/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Sizes shared by BPF programs and user space, one definition each. Plain C. */
#ifndef TPKIT_LIMITS_H
#define TPKIT_LIMITS_H

/* A task's comm: TASK_COMM_LEN, 15 characters and a NUL. */
#define TPKIT_COMM_LEN 16

/* The BPF ring buffer of streaming tools: large enough that a reader consuming every 10 ms
 * keeps up with millions of small events a second. */
#define TPKIT_RINGBUF_BYTES (4u << 20)

/* Start timestamps a timing map (timing.bpf.h) holds unless user space sizes it before load:
 * one per thread or request in flight, as many as bcc's tools allow. */
#define TPKIT_TIMING_MAX_ENTRIES 10240

#endif
