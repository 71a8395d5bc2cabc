/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* pidpersec's counters, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/pidpersec.h>). */
#ifndef TPKIT_PIDPERSEC_H
#define TPKIT_PIDPERSEC_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif

/* The new tasks since the start, in a per-CPU array's only entry: BPF only adds to them. */
struct pidpersec_counts {
	__u64 processes; /* clone_flags without CLONE_THREAD: a new process (its PID is its TID) */
	__u64 threads;   /* CLONE_THREAD: a new thread of the creator's process */
};

#endif
