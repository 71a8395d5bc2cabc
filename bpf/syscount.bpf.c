/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every syscall of the machine counted in the kernel, by syscall or by process, from the raw
 * tracepoints sys_enter and sys_exit: raw, because they run for every syscall and a raw
 * tracepoint skips building the trace record that a classic one fills first.
 *
 * No CO-RE relocation: libbpf then need not load the kernel's BTF, which would take most of the
 * start-up's time and memory. The arguments are read as the raw u64s they are, the syscall number at
 * return from pt_regs at the offset user space gives (the ptrace ABI's layout). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tools/syscount.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

const volatile bool count_by_process = false;
const volatile bool with_latency = false;
const volatile bool failed_only = false;
const volatile __u32 only_errno = 0; /* 0: any */
const volatile __u32 only_syscall = SYSCOUNT_EVERY_SYSCALL;
const volatile __u32 orig_ax_offset = 0; /* of the syscall number in struct pt_regs */

/* By syscall: its number indexes a per-CPU array, no hashing on the hot path. The counters only
 * grow; user space takes their growth since its previous read, so nothing is lost to a read. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SYSCOUNT_MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, struct syscount_value);
} by_syscall SEC(".maps");

/* By process (-P): processes come and go, so a per-CPU hash keyed by process ID that user space
 * drains every interval. */
TPKIT_SWAPPED_HALF(by_process, BPF_MAP_TYPE_PERCPU_HASH, __u32, struct syscount_value)
	by_process_a SEC(".maps"), by_process_b SEC(".maps");
TPKIT_SWAPPED_SLOT(by_process) by_process SEC(".maps");

/* -P: the calling thread's name when a CPU first counts its process in an interval; user space
 * forgets the names of exited processes, and prefers /proc's name of the main thread for those
 * still running. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[TPKIT_COMM_LEN]);
} process_names SEC(".maps");

/* -L: the syscall each thread is in and when it entered it, in the thread's own storage: no
 * hashing or locking for every syscall as a map keyed by tid needs, nothing to size, nothing
 * left behind by a thread that never returns (exit, exit_group), and the syscall number as the
 * entry saw it. */
struct syscall_entry {
	__u64 start_ns;
	__u32 nr;
	__u32 in_syscall; /* 0 once the return is counted, or before the first entry */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct syscall_entry);
} entries SEC(".maps");

static __always_inline bool syscall_selected(__u32 nr)
{
	return only_syscall == SYSCOUNT_EVERY_SYSCALL || nr == only_syscall;
}

/* A raw tracepoint's arguments: sys_enter (struct pt_regs *regs, long id), sys_exit
 * (struct pt_regs *regs, long ret). */
static __always_inline __u64 raw_arg(void *ctx, int i)
{
	return ((__u64 *)ctx)[i];
}

static __always_inline struct syscount_value *process_value(void)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct syscount_value zero = {}, *value;
	void *active = TPKIT_ACTIVE_MAP(by_process);
	char comm[TPKIT_COMM_LEN];

	if (!active)
		return 0;
	value = bpf_map_lookup_elem(active, &pid);
	if (value)
		return value;
	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&process_names, &pid, comm, BPF_ANY);
	return tpkit_lookup_or_init(active, &pid, &zero, &tpkit_missed);
}

static __always_inline void count_syscall(__u32 nr, __u64 ns)
{
	struct syscount_value *value;

	if (count_by_process) {
		value = process_value();
	} else {
		value = bpf_map_lookup_elem(&by_syscall, &nr);
		if (!value)
			tpkit_count(&tpkit_missed);
	}
	if (!value)
		return;
	value->count += 1;
	value->total_ns += ns;
}

/* Counts at entry when the return value does not matter: the syscall number is an argument
 * here, and exit and exit_group, which never return, are counted too. */
SEC("raw_tp/sys_enter")
int count_enter(void *ctx)
{
	__u32 nr = raw_arg(ctx, 1);

	if (!syscall_selected(nr) || !tpkit_current_selected())
		return 0;
	count_syscall(nr, 0);
	return 0;
}

/* -L: the current thread's syscall and its entry time. */
SEC("raw_tp/sys_enter")
int start_enter(void *ctx)
{
	__u32 nr = raw_arg(ctx, 1);
	struct syscall_entry *entry;

	if (!syscall_selected(nr) || !tpkit_current_selected())
		return 0;
	entry = bpf_task_storage_get(&entries, bpf_get_current_task_btf(), 0,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!entry) {
		tpkit_count(&tpkit_missed); /* no memory for it */
		return 0;
	}
	entry->nr = nr;
	entry->in_syscall = 1;
	entry->start_ns = bpf_ktime_get_ns();
	return 0;
}

/* Counts at return: -x, -e (the return value) and -L (the time since entry). */
SEC("raw_tp/sys_exit")
int count_exit(void *ctx)
{
	long ret = raw_arg(ctx, 1);
	__u64 ns = 0;
	__u32 nr;

	if (with_latency) {
		/* Only selected threads have an entry: the filters were applied there. */
		struct syscall_entry *entry =
			bpf_task_storage_get(&entries, bpf_get_current_task_btf(), 0, 0);

		if (!entry || !entry->in_syscall)
			return 0; /* entered before the programs were attached */
		entry->in_syscall = 0;
		ns = bpf_ktime_get_ns() - entry->start_ns;
		nr = entry->nr;
	} else {
		long regs_nr = -1;

		bpf_probe_read_kernel(&regs_nr, sizeof(regs_nr),
				      (char *)raw_arg(ctx, 0) + orig_ax_offset);

		/* -1: rt_sigreturn sets it so that the interrupted syscall is not restarted. */
		if (regs_nr < 0 || !syscall_selected(regs_nr) || !tpkit_current_selected())
			return 0;
		nr = regs_nr;
	}
	if (failed_only && ret >= 0)
		return 0;
	if (only_errno && ret != -(long)only_errno)
		return 0;
	count_syscall(nr, ns);
	return 0;
}
