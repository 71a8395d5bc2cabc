/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Signals as the kernel generates them (signal:signal_generate), or with -k as kill(),
 * tkill() and tgkill() send them, with each call's result (syscalls:sys_enter_* and
 * sys_exit_*). sigsnoop and killsnoop load this one object. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/tools/sigsnoop.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/signal.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

const volatile bool kill_calls = false;  /* -k: the calls, not signal_generate */
const volatile bool failed_only = false; /* -x */
const volatile __u64 signal_set = 0;     /* -s: bit sig-1; 0: every signal */
const volatile __s32 target_pid = 0;     /* --tpid; 0: any */

/* A kill call in progress in a task, from its entry to its exit. Task-local storage: nothing to
 * size, nothing left behind by tasks that die. */
struct kill_call {
	__s32 sig;
	__s32 target_pid;
	__u32 call;
	__u32 in_progress;
	char target_comm[TPKIT_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct kill_call);
} kill_calls_in_progress SEC(".maps");

static __always_inline bool wanted(__s32 sig, __s32 pid)
{
	if (signal_set && (sig < 1 || sig > 64 || !(signal_set & (1ull << (sig - 1)))))
		return false;
	return !target_pid || pid == target_pid;
}

SEC("tracepoint/signal/signal_generate")
int signal_generate(void *ctx)
{
	struct sigsnoop_event event = {};
	struct kill_call *call;
	__s32 sig = tpkit_signal_generate_sig(ctx);
	__s32 pid = tpkit_signal_generate_pid(ctx);

	if (kill_calls) {
		/* The target of the current task's call: its comm, which the call's exit cannot
		 * look up by PID on every kernel. */
		call = bpf_task_storage_get(&kill_calls_in_progress, bpf_get_current_task_btf(), 0, 0);
		if (call && call->in_progress && call->target_pid == pid && call->sig == sig)
			tpkit_signal_generate_comm(ctx, call->target_comm, sizeof(call->target_comm));
		return 0;
	}
	if (!tpkit_current_selected() || !wanted(sig, pid))
		return 0;
	event.result = tpkit_signal_generate_result(ctx);
	if (failed_only &&
	    (event.result == TRACE_SIGNAL_DELIVERED || event.result == TRACE_SIGNAL_LOSE_INFO))
		return 0;
	tpkit_fill_task_header(&event.task);
	event.sig = sig;
	event.target_pid = pid;
	tpkit_signal_generate_comm(ctx, event.target_comm, sizeof(event.target_comm));
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}

/* Syscall arguments are whole registers: the kernel takes the low 32 bits of an int. */
static __always_inline int call_entry(__u32 which, __u64 pid, __u64 sig)
{
	struct kill_call *call;

	if (!tpkit_current_selected() || !wanted((__s32)sig, (__s32)pid))
		return 0;
	call = bpf_task_storage_get(&kill_calls_in_progress, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!call)
		return 0; /* no memory: the call goes unseen, as a filtered one */
	call->sig = (__s32)sig;
	call->target_pid = (__s32)pid;
	call->call = which;
	call->target_comm[0] = '\0';
	call->in_progress = 1;
	return 0;
}

static __always_inline int call_exit(void *ctx, __s64 ret)
{
	struct sigsnoop_event event = {};
	struct kill_call *call;

	call = bpf_task_storage_get(&kill_calls_in_progress, bpf_get_current_task_btf(), 0, 0);
	/* No entry: a filtered call, or one that began before the tool attached. */
	if (!call || !call->in_progress)
		return 0;
	call->in_progress = 0;
	if (failed_only && ret >= 0)
		return 0;
	tpkit_fill_task_header(&event.task);
	event.sig = call->sig;
	event.target_pid = call->target_pid;
	event.result = (__s32)ret;
	event.call = call->call;
	__builtin_memcpy(event.target_comm, call->target_comm, sizeof(event.target_comm));
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_kill")
int kill_entry(void *ctx)
{
	return call_entry(SIGSNOOP_KILL, tpkit_sys_enter_kill_pid(ctx), tpkit_sys_enter_kill_sig(ctx));
}

SEC("tracepoint/syscalls/sys_exit_kill")
int kill_exit(void *ctx)
{
	return call_exit(ctx, tpkit_sys_exit_kill_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_tkill")
int tkill_entry(void *ctx)
{
	return call_entry(SIGSNOOP_TKILL, tpkit_sys_enter_tkill_pid(ctx), tpkit_sys_enter_tkill_sig(ctx));
}

SEC("tracepoint/syscalls/sys_exit_tkill")
int tkill_exit(void *ctx)
{
	return call_exit(ctx, tpkit_sys_exit_tkill_ret(ctx));
}

/* tgkill(tgid, tid, sig): the target is the thread. */
SEC("tracepoint/syscalls/sys_enter_tgkill")
int tgkill_entry(void *ctx)
{
	return call_entry(SIGSNOOP_TGKILL, tpkit_sys_enter_tgkill_pid(ctx),
			  tpkit_sys_enter_tgkill_sig(ctx));
}

SEC("tracepoint/syscalls/sys_exit_tgkill")
int tgkill_exit(void *ctx)
{
	return call_exit(ctx, tpkit_sys_exit_tgkill_ret(ctx));
}
