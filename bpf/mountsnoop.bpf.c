/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* mount, umount, fsopen, fsconfig, fsmount and move_mount calls, each with its arguments and
 * return value: the enter tracepoint keeps the arguments, the exit tracepoint sends the event. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/tools/mountsnoop.h>
#include <tpkit/call.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/syscalls_mount.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

const volatile bool failed_only = false; /* -x */

/* A call between its entry and its return: its arguments. */
struct mount_call {
	struct tpkit_call call;
	__u64 args[5];
};

TPKIT_CALL_MAP(struct mount_call) calls SEC(".maps");
TPKIT_SCRATCH(struct mountsnoop_event) scratch SEC(".maps");

static __always_inline int enter(__u32 op, __u64 a0, __u64 a1, __u64 a2, __u64 a3, __u64 a4)
{
	struct mount_call *c;

	if (!tpkit_current_selected())
		return 0;
	c = tpkit_call_enter(&calls, op, &tpkit_drops);
	if (!c)
		return 0;
	c->args[0] = a0;
	c->args[1] = a1;
	c->args[2] = a2;
	c->args[3] = a3;
	c->args[4] = a4;
	return 0;
}

/* Appends the user string at ptr to e's strings as string `index`; returns the bytes used. At
 * the return the kernel has read the string already, so its pages are present. */
static __always_inline __u64 add_string(struct mountsnoop_event *e, int index, __u64 used,
					__u64 ptr)
{
	bool cut = false;
	long len = 0;

	if (ptr) {
		char *dst = e->strings + tpkit_bound(used, sizeof(e->strings) - MOUNTSNOOP_STRING_MAX);

		len = tpkit_read_user_str(dst, MOUNTSNOOP_STRING_MAX, (const char *)ptr, &cut);
		/* Older kernels (6.1) read an empty string as 0 bytes rather than 1, its NUL
		 * (strncpy_from_user_nofault, fixed later): "" must not look like NULL. */
		if (len == 0) {
			dst[0] = '\0';
			len = 1;
		}
	}
	e->string_len[index & (MOUNTSNOOP_STRINGS - 1)] = len;
	if (cut)
		e->strings_cut |= 1u << index;
	return len > 0 ? used + len : used;
}

static __always_inline int leave(void *ctx, __u32 op, __s64 ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mountsnoop_event *e;
	struct mount_call *c;
	__u64 *args, used = 0;

	c = tpkit_call_return(&calls, op);
	if (!c || (failed_only && ret >= 0))
		return 0;
	e = tpkit_scratch(&scratch);
	if (!e)
		return 0;
	/* The buffer holds this CPU's previous event: every field before the strings is set. */
	__builtin_memset(e, 0, __builtin_offsetof(struct mountsnoop_event, strings));
	tpkit_fill_task_header(&e->task);
	e->latency_ns = bpf_ktime_get_ns() - c->call.start_ns;
	e->ret = ret;
	e->op = op;
	e->mnt_ns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);
	args = c->args;
	switch (op) {
	case MOUNTSNOOP_MOUNT:
		e->flags = args[3];
		used = add_string(e, 0, used, args[0]);
		used = add_string(e, 1, used, args[1]);
		used = add_string(e, 2, used, args[2]);
		used = add_string(e, 3, used, args[4]);
		break;
	case MOUNTSNOOP_UMOUNT:
		e->flags = args[1];
		used = add_string(e, 0, used, args[0]);
		break;
	case MOUNTSNOOP_FSOPEN:
		e->flags = args[1];
		used = add_string(e, 0, used, args[0]);
		break;
	case MOUNTSNOOP_FSCONFIG:
		e->fd = args[0];
		e->cmd = args[1];
		e->aux = args[4];
		used = add_string(e, 0, used, args[2]);
		/* The value is a string only for these commands (a blob, or nothing, otherwise). */
		if (e->cmd == FSCONFIG_SET_STRING || e->cmd == FSCONFIG_SET_PATH ||
		    e->cmd == FSCONFIG_SET_PATH_EMPTY)
			used = add_string(e, 1, used, args[3]);
		break;
	case MOUNTSNOOP_FSMOUNT:
		e->fd = args[0];
		e->flags = args[1];
		e->attr_flags = args[2];
		break;
	case MOUNTSNOOP_MOVE_MOUNT:
		e->fd = args[0];
		e->to_fd = args[2];
		e->flags = args[4];
		used = add_string(e, 0, used, args[1]);
		used = add_string(e, 1, used, args[3]);
		break;
	}
	tpkit_emit_prefix(ctx, e, __builtin_offsetof(struct mountsnoop_event, strings) + used);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mount")
int mount_entry(void *ctx)
{
	return enter(MOUNTSNOOP_MOUNT, (__u64)tpkit_sys_enter_mount_dev_name(ctx),
		     (__u64)tpkit_sys_enter_mount_dir_name(ctx), (__u64)tpkit_sys_enter_mount_type(ctx),
		     tpkit_sys_enter_mount_flags(ctx), (__u64)tpkit_sys_enter_mount_data(ctx));
}

SEC("tracepoint/syscalls/sys_exit_mount")
int mount_exit(void *ctx)
{
	return leave(ctx, MOUNTSNOOP_MOUNT, tpkit_sys_exit_mount_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_umount")
int umount_entry(void *ctx)
{
	return enter(MOUNTSNOOP_UMOUNT, (__u64)tpkit_sys_enter_umount_name(ctx),
		     tpkit_sys_enter_umount_flags(ctx), 0, 0, 0);
}

SEC("tracepoint/syscalls/sys_exit_umount")
int umount_exit(void *ctx)
{
	return leave(ctx, MOUNTSNOOP_UMOUNT, tpkit_sys_exit_umount_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_fsopen")
int fsopen_entry(void *ctx)
{
	return enter(MOUNTSNOOP_FSOPEN, (__u64)tpkit_sys_enter_fsopen__fs_name(ctx),
		     tpkit_sys_enter_fsopen_flags(ctx), 0, 0, 0);
}

SEC("tracepoint/syscalls/sys_exit_fsopen")
int fsopen_exit(void *ctx)
{
	return leave(ctx, MOUNTSNOOP_FSOPEN, tpkit_sys_exit_fsopen_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_fsconfig")
int fsconfig_entry(void *ctx)
{
	return enter(MOUNTSNOOP_FSCONFIG, tpkit_sys_enter_fsconfig_fd(ctx),
		     tpkit_sys_enter_fsconfig_cmd(ctx), (__u64)tpkit_sys_enter_fsconfig__key(ctx),
		     (__u64)tpkit_sys_enter_fsconfig__value(ctx), tpkit_sys_enter_fsconfig_aux(ctx));
}

SEC("tracepoint/syscalls/sys_exit_fsconfig")
int fsconfig_exit(void *ctx)
{
	return leave(ctx, MOUNTSNOOP_FSCONFIG, tpkit_sys_exit_fsconfig_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_fsmount")
int fsmount_entry(void *ctx)
{
	return enter(MOUNTSNOOP_FSMOUNT, tpkit_sys_enter_fsmount_fs_fd(ctx),
		     tpkit_sys_enter_fsmount_flags(ctx), tpkit_sys_enter_fsmount_attr_flags(ctx), 0, 0);
}

SEC("tracepoint/syscalls/sys_exit_fsmount")
int fsmount_exit(void *ctx)
{
	return leave(ctx, MOUNTSNOOP_FSMOUNT, tpkit_sys_exit_fsmount_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_move_mount")
int move_mount_entry(void *ctx)
{
	return enter(MOUNTSNOOP_MOVE_MOUNT, tpkit_sys_enter_move_mount_from_dfd(ctx),
		     (__u64)tpkit_sys_enter_move_mount_from_pathname(ctx),
		     tpkit_sys_enter_move_mount_to_dfd(ctx),
		     (__u64)tpkit_sys_enter_move_mount_to_pathname(ctx),
		     tpkit_sys_enter_move_mount_flags(ctx));
}

SEC("tracepoint/syscalls/sys_exit_move_mount")
int move_mount_exit(void *ctx)
{
	return leave(ctx, MOUNTSNOOP_MOVE_MOUNT, tpkit_sys_exit_move_mount_ret(ctx));
}
