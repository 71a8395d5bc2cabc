/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every statfs, stat, lstat, newfstatat and statx with its path and result: the entry keeps the
 * arguments, the return reads the path (the kernel has just read it too) and sends the event. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/tools/statsnoop.h>
#include <tpkit/call.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/syscalls_stat.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

#define AT_FDCWD -100

const volatile bool failed_only = false; /* -x */

TPKIT_CALL_MAP(struct tpkit_path_call) stat_calls SEC(".maps");
TPKIT_SCRATCH(struct statsnoop_event) scratch SEC(".maps");

static __always_inline int call_entry(__u32 id, __s32 dfd, const char *path, __u32 flags)
{
	return tpkit_path_call_enter(&stat_calls, id, dfd, path, flags, 0, &tpkit_drops);
}

static __always_inline int call_return(void *ctx, __u32 id, __s64 ret)
{
	struct tpkit_path_call *c = tpkit_path_call_return(&stat_calls, id, ret, failed_only);
	struct statsnoop_event *e;

	if (!c)
		return 0;
	e = tpkit_scratch(&scratch);
	if (!e)
		return 0;
	tpkit_fill_task_header(&e->task);
	e->ret = ret;
	e->dfd = c->dfd;
	e->flags = c->flags;
	e->call = id;
	tpkit_read_user_path(e->path, sizeof(e->path), c->path, &e->path_size, &e->path_cut);
	tpkit_emit_prefix(ctx, e, __builtin_offsetof(struct statsnoop_event, path) + e->path_size);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_statfs")
int statfs_entry(void *ctx)
{
	return call_entry(STATSNOOP_STATFS, AT_FDCWD, tpkit_sys_enter_statfs_pathname(ctx), 0);
}

SEC("tracepoint/syscalls/sys_exit_statfs")
int statfs_exit(void *ctx)
{
	return call_return(ctx, STATSNOOP_STATFS, tpkit_sys_exit_statfs_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_newstat")
int newstat_entry(void *ctx)
{
	return call_entry(STATSNOOP_NEWSTAT, AT_FDCWD, tpkit_sys_enter_newstat_filename(ctx), 0);
}

SEC("tracepoint/syscalls/sys_exit_newstat")
int newstat_exit(void *ctx)
{
	return call_return(ctx, STATSNOOP_NEWSTAT, tpkit_sys_exit_newstat_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_statx")
int statx_entry(void *ctx)
{
	return call_entry(STATSNOOP_STATX, tpkit_sys_enter_statx_dfd(ctx),
			  tpkit_sys_enter_statx_filename(ctx), tpkit_sys_enter_statx_flags(ctx));
}

SEC("tracepoint/syscalls/sys_exit_statx")
int statx_exit(void *ctx)
{
	return call_return(ctx, STATSNOOP_STATX, tpkit_sys_exit_statx_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_newfstatat")
int newfstatat_entry(void *ctx)
{
	return call_entry(STATSNOOP_NEWFSTATAT, tpkit_sys_enter_newfstatat_dfd(ctx),
			  tpkit_sys_enter_newfstatat_filename(ctx), tpkit_sys_enter_newfstatat_flag(ctx));
}

SEC("tracepoint/syscalls/sys_exit_newfstatat")
int newfstatat_exit(void *ctx)
{
	return call_return(ctx, STATSNOOP_NEWFSTATAT, tpkit_sys_exit_newfstatat_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_newlstat")
int newlstat_entry(void *ctx)
{
	return call_entry(STATSNOOP_NEWLSTAT, AT_FDCWD, tpkit_sys_enter_newlstat_filename(ctx), 0);
}

SEC("tracepoint/syscalls/sys_exit_newlstat")
int newlstat_exit(void *ctx)
{
	return call_return(ctx, STATSNOOP_NEWLSTAT, tpkit_sys_exit_newlstat_ret(ctx));
}
