/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every execve and execveat with its filename and arguments, read at the entry (a successful exec
 * replaces the memory they are in), sent at the return with its result. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/tools/execsnoop.h>
#include <tpkit/call.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/syscalls_exec.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

const volatile bool include_failed = false; /* -x */
const volatile __u32 max_args = EXECSNOOP_DEFAULT_ARGS;

/* The event is built at the entry, in the thread's storage, and sent from there. */
struct exec_call {
	struct tpkit_call call;
	struct execsnoop_event event;
};

TPKIT_CALL_MAP(struct exec_call) exec_calls SEC(".maps");

#define STRINGS_SIZE sizeof(((struct execsnoop_event *)0)->strings)

/* Counting argv's pointers past those read, a chunk at a time. */
struct argv_count {
	const char *const *argv;
	__u64 index; /* the first pointer not counted yet */
	bool ended;  /* its NULL was found */
};

#define ARGV_CHUNK 16

static long count_argv_chunk(__u64 i, struct argv_count *count)
{
	const char *ptrs[ARGV_CHUNK];

	if (bpf_probe_read_user(ptrs, sizeof(ptrs), count->argv + count->index)) {
		/* The chunk crosses into unmapped memory: one pointer at a time up to there. */
		for (int j = 0; j < ARGV_CHUNK; j++) {
			const char *p;

			if (bpf_probe_read_user(&p, sizeof(p), count->argv + count->index) || !p) {
				count->ended = true;
				return 1;
			}
			count->index++;
		}
		return 0;
	}
	for (int j = 0; j < ARGV_CHUNK; j++) {
		if (!ptrs[j]) {
			count->ended = true;
			return 1;
		}
		count->index++;
	}
	return 0;
}

/* Reading argv's strings, one argument a call, into e->strings after what e->strings_size says is
 * used. That count lives in the map value, where the verifier does not follow it: callbacks are
 * verified until their states repeat, which a count on the stack, growing, never does. */
struct argv_read {
	struct execsnoop_event *e;
	const char *const *argv;
	bool ended; /* argv's NULL was found */
};

static long read_arg(__u64 i, struct argv_read *r)
{
	struct execsnoop_event *e = r->e;
	__u64 used = e->strings_size;
	const char *arg;
	char *dst;
	bool cut;
	long len;

	if (bpf_probe_read_user(&arg, sizeof(arg), &r->argv[i]) || !arg) {
		r->ended = true;
		return 1;
	}
	if (used > STRINGS_SIZE - EXECSNOOP_ARG_MAX)
		return 1; /* no room: counted with the rest */
	dst = e->strings + tpkit_bound(used, STRINGS_SIZE - EXECSNOOP_ARG_MAX);
	len = tpkit_read_user_str(dst, EXECSNOOP_ARG_MAX, arg, &cut);
	if (len <= 0) { /* unreadable: an empty argument, counted as cut */
		dst[0] = '\0';
		len = 1;
		cut = true;
	}
	if (cut)
		e->args_cut[(i / 64) & 1] |= 1ull << (i % 64);
	e->strings_size = used + len;
	e->args_count++;
	return 0;
}

static __always_inline int exec_entry(__u32 id, const char *filename, const char *const *argv)
{
	struct argv_count count = {.argv = argv};
	struct argv_read read = {.argv = argv};
	struct execsnoop_event *e;
	struct exec_call *c;

	if (!tpkit_current_selected())
		return 0;
	c = tpkit_call_enter(&exec_calls, id, &tpkit_drops);
	if (!c)
		return 0;
	e = &c->event;
	e->call = id;
	e->args_count = 0;
	e->args_cut[0] = 0;
	e->args_cut[1] = 0;

	tpkit_read_user_path(e->strings, EXECSNOOP_FILENAME_MAX, filename, &e->filename_size,
			     &e->filename_cut);
	e->strings_size = e->filename_size;

	read.e = e;
	bpf_loop(max_args < EXECSNOOP_MOST_ARGS ? max_args : EXECSNOOP_MOST_ARGS, read_arg, &read, 0);
	count.index = e->args_count;
	count.ended = read.ended;
	if (!count.ended)
		/* 2M pointers: more than any argv the kernel takes (at most 6 MiB of them and their
		 * strings). */
		bpf_loop(1 << 17, count_argv_chunk, &count, 0);
	e->argc = count.index;
	return 0;
}

static __always_inline int exec_return(void *ctx, __u32 id, long ret)
{
	struct exec_call *c = tpkit_call_return(&exec_calls, id);
	struct execsnoop_event *e;
	struct task_struct *task;

	if (!c)
		return 0;
	if (ret >= 0 || include_failed) {
		e = &c->event;
		tpkit_fill_task_header(&e->task);
		task = (struct task_struct *)bpf_get_current_task();
		e->ppid = BPF_CORE_READ(task, real_parent, tgid);
		e->ret = ret;
		tpkit_emit_prefix(ctx, e, __builtin_offsetof(struct execsnoop_event, strings) +
						  e->strings_size);
	}
	/* 12 KiB a thread, until it exits: given back now. */
	tpkit_call_forget(&exec_calls);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_execve")
int execve_entry(void *ctx)
{
	return exec_entry(EXECSNOOP_EXECVE, tpkit_sys_enter_execve_filename(ctx),
			  tpkit_sys_enter_execve_argv(ctx));
}

SEC("tracepoint/syscalls/sys_exit_execve")
int execve_exit(void *ctx)
{
	return exec_return(ctx, EXECSNOOP_EXECVE, tpkit_sys_exit_execve_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_execveat")
int execveat_entry(void *ctx)
{
	return exec_entry(EXECSNOOP_EXECVEAT, tpkit_sys_enter_execveat_filename(ctx),
			  tpkit_sys_enter_execveat_argv(ctx));
}

SEC("tracepoint/syscalls/sys_exit_execveat")
int execveat_exit(void *ctx)
{
	return exec_return(ctx, EXECSNOOP_EXECVEAT, tpkit_sys_exit_execveat_ret(ctx));
}
