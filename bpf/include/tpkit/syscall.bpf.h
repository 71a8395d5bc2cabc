/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The generic engines' syscall events through raw_syscalls:sys_enter / sys_exit: one program
 * for any number of syscalls:sys_enter_* (or sys_exit_*) events, picked by syscall number from
 * tpkit_syscall_events, with the record each classic event would have built. The raw tracepoint
 * skips building a trace record for the classic one, and its cost does not grow with the number
 * of syscalls traced; attaching and detaching one program takes one grace period, not hundreds.
 *
 * Same events as the classic path: the kernel's syscall events skip the syscalls of 32-bit
 * tasks (x86's in_32bit_syscall(): TS_COMPAT, or x32's number bit), and so does this.
 *
 * x86-64 only (its registers and thread_info); user space attaches the classic events
 * elsewhere. The engine's rodata must be named tpkit_config (struct tpkit_engine_config), and
 * its map of the events, which user space fills, tpkit_syscall_events:
 *
 *	struct tpkit_syscall_events_map tpkit_syscall_events SEC(".maps");
 */
#ifndef TPKIT_SYSCALL_BPF_H
#define TPKIT_SYSCALL_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/engine.h>

/* Indexed by syscall number; sized to TPKIT_SYSCALL_NR_MAX by raw instances, 1 otherwise. */
struct tpkit_syscall_events_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tpkit_syscall_event);
};

#if defined(__TARGET_ARCH_x86)
/* Read through BTF pointers (bpf_get_current_task_btf, bpf_task_pt_regs: 5.15+), plain loads
 * the verifier checks against the kernel's own BTF, rather than bpf_probe_read_kernel, a helper
 * call several times dearer. At fixed offsets, not CO-RE: libbpf then need not load the
 * kernel's BTF (most of the start-up's time and memory). */
/* struct pt_regs of x86-64, the ptrace ABI's layout; the arguments of a syscall are in di, si,
 * dx, r10, r8, r9 (syscall_get_arguments()). */
#define TPKIT_REGS_R10 56
#define TPKIT_REGS_R9 64
#define TPKIT_REGS_R8 72
#define TPKIT_REGS_DX 96
#define TPKIT_REGS_SI 104
#define TPKIT_REGS_DI 112
#define TPKIT_REGS_ORIG_AX 120
/* task_struct starts with thread_info (THREAD_INFO_IN_TASK), whose u32 status follows flags and
 * syscall_work (5.11+); TS_COMPAT marks a 32-bit syscall in progress
 * (arch/x86/include/asm/thread_info.h). */
#define TPKIT_THREAD_INFO_STATUS 16
#define TPKIT_TS_COMPAT 0x0002u

#define tpkit_word_at(base, offset) (*(__u64 *)((void *)(base) + (offset)))

/* The traced event this raw_syscalls event is, in `events` (a struct tpkit_syscall_events_map),
 * with its record built into rec (zero-filled by the caller): the number, the arguments something
 * reads (tpkit_config.syscall_args), or the return value. NULL when the syscall is not one of the
 * run's events. */
static __always_inline const struct tpkit_syscall_event *
tpkit_syscall_event(__u64 *ctx, struct tpkit_syscall_record *rec, void *events)
{
	const struct tpkit_syscall_event *event;
	__u64 nr = ctx[1]; /* sys_enter: the number; sys_exit: the return value */
	struct task_struct *task = 0;
	void *regs = 0;
	__u32 key;

	/* Most syscalls are not traced: at sys_enter, their number turns them away first. */
	if (tpkit_config.syscall_tracepoint == TPKIT_SYSCALL_EXIT) {
		task = bpf_get_current_task_btf();
		regs = (void *)bpf_task_pt_regs(task);
		nr = tpkit_word_at(regs, TPKIT_REGS_ORIG_AX);
	}
	if (nr >= TPKIT_SYSCALL_NR_MAX) /* -1 (no syscall), x32 */
		return 0;
	key = nr;
	event = bpf_map_lookup_elem(events, &key);
	if (!event || !event->traced)
		return 0;
	if (!task)
		task = bpf_get_current_task_btf();
	if (*(__u32 *)((void *)task + TPKIT_THREAD_INFO_STATUS) & TPKIT_TS_COMPAT)
		return 0;
	rec->nr = key;
	if (tpkit_config.syscall_tracepoint == TPKIT_SYSCALL_EXIT) {
		rec->args[0] = ctx[1];
	} else if (tpkit_config.syscall_args) {
		regs = (void *)bpf_task_pt_regs(task);
		if (tpkit_config.syscall_args & 1)
			rec->args[0] = tpkit_word_at(regs, TPKIT_REGS_DI);
		if (tpkit_config.syscall_args & 2)
			rec->args[1] = tpkit_word_at(regs, TPKIT_REGS_SI);
		if (tpkit_config.syscall_args & 4)
			rec->args[2] = tpkit_word_at(regs, TPKIT_REGS_DX);
		if (tpkit_config.syscall_args & 8)
			rec->args[3] = tpkit_word_at(regs, TPKIT_REGS_R10);
		if (tpkit_config.syscall_args & 16)
			rec->args[4] = tpkit_word_at(regs, TPKIT_REGS_R8);
		if (tpkit_config.syscall_args & 32)
			rec->args[5] = tpkit_word_at(regs, TPKIT_REGS_R9);
	}
	return event;
}
#else
static __always_inline const struct tpkit_syscall_event *
tpkit_syscall_event(__u64 *ctx, struct tpkit_syscall_record *rec, void *events)
{
	return 0;
}
#endif

#endif
