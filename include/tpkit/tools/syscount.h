/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* syscount's keys and values, shared by its BPF program and user space (installed for embedders
 * as <tpkit/tools/syscount.h>). */
#ifndef TPKIT_SYSCOUNT_H
#define TPKIT_SYSCOUNT_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/limits.h>

/* rodata only_syscall when every syscall is counted: no syscall has this number. */
#define SYSCOUNT_EVERY_SYSCALL 0xffffffffu

/* Syscall numbers counted by syscall, an array index: x86-64's run to about 460. Larger ones
 * (x32's, with bit 30 set, or numbers no kernel has) are counted as missed. */
#define SYSCOUNT_MAX_SYSCALLS 1024

/* By process (-P): keyed by the process ID alone; its name goes to a map of its own
 * (process_names) the first time a CPU counts the process in an interval, so the hot path
 * neither reads nor hashes a name. */

/* Per CPU; user space sums the CPUs' values (__u64 counters, in this order). */
struct syscount_value {
	__u64 count;
	__u64 total_ns; /* with -L: time from entry to return */
};

#endif
