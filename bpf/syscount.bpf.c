/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Every syscall of the machine counted in the kernel, by syscall or by process, from the raw
// tracepoints sys_enter and sys_exit: raw, because they run for every syscall and a raw
// tracepoint skips building the trace record that a classic one fills first.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include "syscount.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool by_process = false;
const volatile bool with_latency = false;
const volatile bool failed_only = false;
const volatile __u32 only_errno = 0; /* 0: any */
const volatile __u32 only_syscall = SYSCOUNT_EVERY_SYSCALL;
/* exit and exit_group never return: their starts would stay in the map. Set from the build's
 * syscall table. */
const volatile __u32 exit_nr = SYSCOUNT_EVERY_SYSCALL;
const volatile __u32 exit_group_nr = SYSCOUNT_EVERY_SYSCALL;

TPKIT_SWAPPED_MAP(counts, BPF_MAP_TYPE_PERCPU_HASH, struct syscount_key, struct syscount_value);
/* -L: when each thread entered its syscall. */
TPKIT_TIMING_MAP(starts, __u32);

static __always_inline bool syscall_selected(__u32 nr)
{
	return only_syscall == SYSCOUNT_EVERY_SYSCALL || nr == only_syscall;
}

static __always_inline void count_syscall(__u32 nr, __u64 ns)
{
	struct syscount_value zero = {}, *value;
	struct syscount_key key = {};
	void *active;

	if (by_process) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		key.id = bpf_get_current_pid_tgid() >> 32;
		BPF_CORE_READ_STR_INTO(&key.comm, task, group_leader, comm);
	} else {
		key.id = nr;
	}
	active = tpkit_active_map(&counts);
	if (!active)
		return;
	value = tpkit_lookup_or_init(active, &key, &zero);
	if (!value)
		return;
	value->count += 1;
	value->total_ns += ns;
}

/* Counts at entry when the return value does not matter: the syscall number is an argument
 * here, and exit and exit_group, which never return, are counted too. */
SEC("raw_tp/sys_enter")
int count_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 nr = ctx->args[1];

	if (!syscall_selected(nr) || !tpkit_current_selected())
		return 0;
	count_syscall(nr, 0);
	return 0;
}

/* -L: the entry time of the current thread's syscall. */
SEC("raw_tp/sys_enter")
int start_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 nr = ctx->args[1], tid;

	if (nr == exit_nr || nr == exit_group_nr || !syscall_selected(nr) ||
	    !tpkit_current_selected())
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	tpkit_timing_start(&starts, &tid);
	return 0;
}

/* Counts at return: -x, -e (the return value) and -L (the time since entry). */
SEC("raw_tp/sys_exit")
int count_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	long ret = ctx->args[1], nr;
	__u32 tid;
	__u64 ns = 0;

	if (with_latency) {
		/* First, so that every start is forgotten, whichever filter drops the syscall; only
		 * selected tasks have one. */
		tid = (__u32)bpf_get_current_pid_tgid();
		if (!tpkit_timing_elapsed(&starts, &tid, &ns))
			return 0;
	} else if (!tpkit_current_selected()) {
		return 0;
	}
	if (failed_only && ret >= 0)
		return 0;
	if (only_errno && ret != -(long)only_errno)
		return 0;
	/* -1: rt_sigreturn sets it so that the interrupted syscall is not restarted. */
	nr = BPF_CORE_READ(regs, orig_ax);
	if (nr < 0 || !syscall_selected(nr))
		return 0;
	count_syscall(nr, ns);
	return 0;
}
