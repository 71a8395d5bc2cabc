/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The sync family of syscalls as they are entered: sync, syncfs, fsync, fdatasync, msync,
 * sync_file_range, with their arguments. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/tools/syncsnoop.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/syscalls_sync.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

static __always_inline int emit_call(void *ctx, __s32 nr, __s32 fd, __u64 offset, __u64 nbytes,
				     __u64 flags)
{
	struct syncsnoop_event event = {};

	if (!tpkit_current_selected())
		return 0;
	tpkit_fill_task_header(&event.task);
	event.syscall_nr = nr;
	event.fd = fd;
	event.offset = offset;
	event.nbytes = nbytes;
	event.flags = flags;
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_sync")
int sync_entry(void *ctx)
{
	return emit_call(ctx, tpkit_sys_enter_sync___syscall_nr(ctx), -1, 0, 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_syncfs")
int syncfs_entry(void *ctx)
{
	return emit_call(ctx, tpkit_sys_enter_syncfs___syscall_nr(ctx),
			 tpkit_sys_enter_syncfs_fd(ctx), 0, 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_fsync")
int fsync_entry(void *ctx)
{
	return emit_call(ctx, tpkit_sys_enter_fsync___syscall_nr(ctx),
			 tpkit_sys_enter_fsync_fd(ctx), 0, 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_fdatasync")
int fdatasync_entry(void *ctx)
{
	return emit_call(ctx, tpkit_sys_enter_fdatasync___syscall_nr(ctx),
			 tpkit_sys_enter_fdatasync_fd(ctx), 0, 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_msync")
int msync_entry(void *ctx)
{
	return emit_call(ctx, tpkit_sys_enter_msync___syscall_nr(ctx), -1,
			 tpkit_sys_enter_msync_start(ctx), tpkit_sys_enter_msync_len(ctx),
			 tpkit_sys_enter_msync_flags(ctx));
}

SEC("tracepoint/syscalls/sys_enter_sync_file_range")
int sync_file_range_entry(void *ctx)
{
	return emit_call(ctx, tpkit_sys_enter_sync_file_range___syscall_nr(ctx),
			 tpkit_sys_enter_sync_file_range_fd(ctx),
			 tpkit_sys_enter_sync_file_range_offset(ctx),
			 tpkit_sys_enter_sync_file_range_nbytes(ctx),
			 tpkit_sys_enter_sync_file_range_flags(ctx));
}
