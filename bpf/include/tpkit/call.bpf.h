/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A syscall between its entry and its return (syscalls:sys_enter_X, then sys_exit_X of the same
 * thread), kept in the calling thread's task-local storage: no hashing and nothing to size, nothing
 * left behind by a thread that dies inside a call, and it stays with the thread through an exec
 * (whose tid changes when a thread other than the leader execs, which loses a tid-keyed entry).
 *
 *	struct open_call {
 *		struct tpkit_call call;   (first)
 *		const char *path;
 *		...
 *	};
 *	TPKIT_CALL_MAP(struct open_call) open_calls SEC(".maps");
 *
 *	at the entry:  struct open_call *c =
 *	                       tpkit_call_enter(&open_calls, OPEN_CALL, &tpkit_drops);
 *	               if (c) c->path = ...;
 *	at the return: struct open_call *c = tpkit_call_return(&open_calls, OPEN_CALL);
 *	               if (c) ... the entry's fields, the return value from the exit's context
 *	in between:    tpkit_call_current(&open_calls, OPEN_CALL), at an event inside the call
 *
 * The value is the thread's from one call to the next: the entry sets every field it uses. An
 * entry that finds no memory for the value is counted in `drops` (the tool's tpkit_drops,
 * emit.bpf.h): its event is lost. A large value (an event built at the entry, up to 64 KiB) is
 * given back with tpkit_call_forget().
 *
 * tpkit_read_user_str() (user_str.bpf.h) reads a call's string argument (a path, an argument of
 * argv) and says whether it was cut.
 *
 * Calls on a path (open, stat, …) keep the same arguments: TPKIT_CALL_MAP(struct
 * tpkit_path_call), tpkit_path_call_enter() at the entry, tpkit_path_call_return() at the
 * return, and tpkit_read_user_path() into the event. */
#ifndef TPKIT_CALL_BPF_H
#define TPKIT_CALL_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/user_str.bpf.h>

struct tpkit_call {
	__u64 start_ns; /* bpf_ktime_get_ns() at the entry */
	__u32 id;       /* the tool's number of the call in progress; 0: none */
	__u32 reserved;
};

#define TPKIT_CALL_MAP(value_type)                           \
	struct {                                             \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);     \
		__uint(map_flags, BPF_F_NO_PREALLOC);        \
		__type(key, int);                            \
		__type(value, value_type);                   \
	}

/* The current thread's value with call `id` (not 0) in progress, NULL (counted in drops) when
 * there is no memory. */
static __always_inline void *tpkit_call_enter(void *map, __u32 id, void *drops)
{
	struct tpkit_call *call = bpf_task_storage_get(map, bpf_get_current_task_btf(), 0,
						       BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!call) {
		tpkit_count(drops);
		return 0;
	}
	call->start_ns = bpf_ktime_get_ns();
	call->id = id;
	return call;
}

/* The current thread's value if call `id` is in progress, which goes on; NULL otherwise. For
 * what happens inside the call (a tracepoint the kernel hits on the thread's behalf). */
static __always_inline void *tpkit_call_current(void *map, __u32 id)
{
	struct tpkit_call *call = bpf_task_storage_get(map, bpf_get_current_task_btf(), 0, 0);

	return call && call->id == id ? call : 0;
}

/* The current thread's value if call `id` is the one in progress, which then ends; NULL when the
 * thread was not in it (not selected at the entry, or the entry came before the attach). */
static __always_inline void *tpkit_call_return(void *map, __u32 id)
{
	struct tpkit_call *call = tpkit_call_current(map, id);

	if (call)
		call->id = 0;
	return call;
}

/* Frees the current thread's value, once nothing uses it any more. */
static __always_inline void tpkit_call_forget(void *map)
{
	bpf_task_storage_delete(map, bpf_get_current_task_btf());
}

/* tpkit_read_user_str() into an event's path, with its size (0 when unreadable) and whether
 * it was cut. */
static __always_inline void tpkit_read_user_path(char *dst, __u32 size, const char *src,
						 __u32 *path_size, __u32 *path_cut)
{
	bool cut;
	long len = tpkit_read_user_str(dst, size, src, &cut);

	*path_size = len > 0 ? len : 0;
	*path_cut = cut;
}

struct tpkit_path_call {
	struct tpkit_call call;
	const char *path;
	__u64 flags;
	__u64 mode;
	__s32 dfd; /* the directory a relative path starts from (AT_FDCWD: the working directory) */
	__u32 reserved;
};

/* At the entry of call `id` by a selected task (-p, -t, -u, --cgroup, --comm): its arguments. */
static __always_inline int tpkit_path_call_enter(void *map, __u32 id, __s32 dfd, const char *path,
						 __u64 flags, __u64 mode, void *drops)
{
	struct tpkit_path_call *c;

	if (!tpkit_current_selected())
		return 0;
	c = tpkit_call_enter(map, id, drops);
	if (!c)
		return 0;
	c->path = path;
	c->flags = flags;
	c->mode = mode;
	c->dfd = dfd;
	return 0;
}

/* At the return of call `id` with result `ret`: its entry's arguments, or NULL when the thread
 * was not in the call or, with failed_only, the call succeeded. */
static __always_inline struct tpkit_path_call *tpkit_path_call_return(void *map, __u32 id, __s64 ret,
								       bool failed_only)
{
	struct tpkit_path_call *c = tpkit_call_return(map, id);

	return c && !(failed_only && ret >= 0) ? c : 0;
}

#endif
