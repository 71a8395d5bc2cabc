/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every open, openat and openat2 with its path, flags and result: the entry keeps the arguments,
 * the return reads the path (the kernel has just read it too) and sends the event. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/tools/opensnoop.h>
#include <tpkit/call.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/syscalls_open.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

#define AT_FDCWD -100

const volatile bool failed_only = false; /* -x */
const volatile bool full_path = false;   /* -F */

TPKIT_CALL_MAP(struct tpkit_path_call) open_calls SEC(".maps");
TPKIT_SCRATCH(struct opensnoop_event) scratch SEC(".maps");

static __always_inline int call_entry(__u32 id, __s32 dfd, const char *path, __u64 flags,
				      __u64 mode)
{
	return tpkit_path_call_enter(&open_calls, id, dfd, path, flags, mode, &tpkit_drops);
}

/* -F: walking up from a directory to the task's root, a name (or a mount crossing) a step. The
 * count of bytes written lives in the event (map memory the verifier does not follow), so that
 * the callback's states repeat, as the verifier needs to see. */
struct dir_walk {
	struct opensnoop_event *e;
	struct dentry *dentry;
	struct vfsmount *mnt;
	struct path root; /* the task's root: a chroot ends the walk there */
	bool done;
};

#define STRINGS_SIZE sizeof(((struct opensnoop_event *)0)->strings)

static long walk_up(__u64 i, struct dir_walk *w)
{
	struct opensnoop_event *e = w->e;
	__u64 used = (__u64)e->path_size + e->dir_size;
	struct dentry *dentry = w->dentry, *parent;
	struct vfsmount *mnt = w->mnt;
	const unsigned char *name;
	long len;

	if (dentry == w->root.dentry && mnt == w->root.mnt) {
		w->done = true;
		return 1;
	}
	if (dentry == BPF_CORE_READ(mnt, mnt_root)) {
		/* The top of a mount: on to where it is mounted, in its parent mount. */
		struct mount *m = (void *)mnt - bpf_core_field_offset(struct mount, mnt);
		struct mount *up = BPF_CORE_READ(m, mnt_parent);

		if (up == m) {
			w->done = true; /* the root of the mount tree */
			return 1;
		}
		w->dentry = BPF_CORE_READ(m, mnt_mountpoint);
		w->mnt = (void *)up + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	parent = BPF_CORE_READ(dentry, d_parent);
	if (parent == dentry) {
		w->done = true; /* the root of a detached tree */
		return 1;
	}
	if (used > STRINGS_SIZE - OPENSNOOP_NAME_MAX)
		return 1;
	name = BPF_CORE_READ(dentry, d_name.name);
	len = bpf_probe_read_kernel_str(e->strings + tpkit_bound(used, STRINGS_SIZE - OPENSNOOP_NAME_MAX),
					OPENSNOOP_NAME_MAX, name);
	if (len <= 0)
		return 1;
	e->dir_size += len;
	e->dir_names++;
	w->dentry = parent;
	return 0;
}

/* The names of the directory a relative path starts from: the working directory, or dfd's. */
static __always_inline void add_dir_names(struct opensnoop_event *e, __s32 dfd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct dir_walk w = {.e = e};
	struct path start;

	w.root = BPF_CORE_READ(task, fs, root);
	if (dfd == AT_FDCWD) {
		start = BPF_CORE_READ(task, fs, pwd);
	} else {
		struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
		struct file **fds = BPF_CORE_READ(fdt, fd);
		struct file *file = 0;

		if (dfd < 0 || dfd >= BPF_CORE_READ(fdt, max_fds) ||
		    bpf_probe_read_kernel(&file, sizeof(file), fds + dfd) || !file) {
			e->dir_cut = 1;
			return;
		}
		start = BPF_CORE_READ(file, f_path);
	}
	w.dentry = start.dentry;
	w.mnt = start.mnt;
	bpf_loop(OPENSNOOP_DIR_STEPS, walk_up, &w, 0);
	e->dir_cut = !w.done;
}

static __always_inline int call_return(void *ctx, __u32 id, __s64 ret)
{
	struct tpkit_path_call *c = tpkit_path_call_return(&open_calls, id, ret, failed_only);
	struct opensnoop_event *e;

	if (!c)
		return 0;
	e = tpkit_scratch(&scratch);
	if (!e)
		return 0;
	tpkit_fill_task_header(&e->task);
	e->flags = c->flags;
	e->mode = c->mode;
	e->ret = ret;
	e->dfd = c->dfd;
	e->call = id;
	tpkit_read_user_path(e->strings, OPENSNOOP_PATH_MAX, c->path, &e->path_size, &e->path_cut);
	e->dir_names = 0;
	e->dir_size = 0;
	e->dir_cut = 0;
	if (full_path && e->path_size > 1 && e->strings[0] != '/')
		add_dir_names(e, e->dfd);
	tpkit_emit_prefix(ctx, e, __builtin_offsetof(struct opensnoop_event, strings) +
					  e->path_size + e->dir_size);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_open")
int open_entry(void *ctx)
{
	return call_entry(OPENSNOOP_OPEN, AT_FDCWD, tpkit_sys_enter_open_filename(ctx),
			  tpkit_sys_enter_open_flags(ctx), tpkit_sys_enter_open_mode(ctx));
}

SEC("tracepoint/syscalls/sys_exit_open")
int open_exit(void *ctx)
{
	return call_return(ctx, OPENSNOOP_OPEN, tpkit_sys_exit_open_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_openat")
int openat_entry(void *ctx)
{
	return call_entry(OPENSNOOP_OPENAT, tpkit_sys_enter_openat_dfd(ctx),
			  tpkit_sys_enter_openat_filename(ctx), tpkit_sys_enter_openat_flags(ctx),
			  tpkit_sys_enter_openat_mode(ctx));
}

SEC("tracepoint/syscalls/sys_exit_openat")
int openat_exit(void *ctx)
{
	return call_return(ctx, OPENSNOOP_OPENAT, tpkit_sys_exit_openat_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_openat2")
int openat2_entry(void *ctx)
{
	struct open_how how = {};

	/* The kernel copies at least these 24 bytes (OPEN_HOW_SIZE_VER0); the entry cannot know
	 * yet whether they are readable, the return's result says. */
	bpf_probe_read_user(&how, sizeof(how), tpkit_sys_enter_openat2_how(ctx));
	return call_entry(OPENSNOOP_OPENAT2, tpkit_sys_enter_openat2_dfd(ctx),
			  tpkit_sys_enter_openat2_filename(ctx), how.flags, how.mode);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int openat2_exit(void *ctx)
{
	return call_return(ctx, OPENSNOOP_OPENAT2, tpkit_sys_exit_openat2_ret(ctx));
}
