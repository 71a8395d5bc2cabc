/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* File descriptors passed over Unix sockets: SCM_RIGHTS control messages of sendmsg, recvmsg,
 * sendmmsg and recvmmsg, read from the caller's memory when the call returns. A send's control
 * data is as the caller wrote it; a receive's holds the new descriptors the kernel installed,
 * and msg_controllen and msg_flags as the kernel wrote them back. Each descriptor's file is
 * looked up in the caller's table then, and named by walking its dentries up to the root. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/tools/sofdsnoop.h>
#include <tpkit/call.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/syscalls_msg.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

#define SOL_SOCKET 1
#define SCM_RIGHTS 1
#define MSG_CTRUNC 8
#define CMSG_HDR_SIZE sizeof(struct cmsghdr)

struct msg_call {
	struct tpkit_call call;
	__u64 msg; /* struct user_msghdr *, or struct mmsghdr * for the mmsg calls */
	__s32 sock_fd;
	__u32 reserved;
};

TPKIT_CALL_MAP(struct msg_call) msg_calls SEC(".maps");
TPKIT_SCRATCH(struct sofdsnoop_event) scratch SEC(".maps");

static __always_inline int call_entry(__u32 id, __s32 fd, const void *msg)
{
	struct msg_call *c;

	if (!tpkit_current_selected())
		return 0;
	c = tpkit_call_enter(&msg_calls, id, &tpkit_drops);
	if (c) {
		c->msg = (__u64)msg;
		c->sock_fd = fd;
	}
	return 0;
}

/* Naming a descriptor's file: from its dentry up to the task's root, a name (or a mount
 * crossing) a step of bpf_loop, as opensnoop -F walks a directory. What changes from step to step
 * lives in the event (map memory the verifier does not follow) or starts from values the
 * verifier does not know, so that the callback's states repeat, as the verifier needs to see
 * (Linux 6.1 checks a callback once, in the state of the call). */
struct name_walk {
	struct sofdsnoop_event *e;
	struct sofdsnoop_file *f;
	struct dentry *dentry;
	struct vfsmount *mnt;
	struct path root; /* the task's root: a chroot ends the walk there */
	bool done;
};

#define STRINGS_SIZE sizeof(((struct sofdsnoop_event *)0)->strings)

static __always_inline struct file *file_of(struct fdtable *fdt, __s32 fd)
{
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *file = 0;

	if (fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	bpf_probe_read_kernel(&file, sizeof(file), fds + fd);
	return file;
}

static __always_inline __u64 sock_ino(__s32 fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file *file = file_of(BPF_CORE_READ(task, files, fdt), fd);

	return file ? BPF_CORE_READ(file, f_inode, i_ino) : 0;
}

static long name_step(__u64 i, struct name_walk *w)
{
	struct sofdsnoop_event *e = w->e;
	struct sofdsnoop_file *f = w->f;
	struct dentry *dentry = w->dentry, *parent;
	struct vfsmount *mnt = w->mnt;
	__u64 used = e->names_size;
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
	if (used > STRINGS_SIZE - SOFDSNOOP_NAME_MAX)
		return 1;
	parent = BPF_CORE_READ(dentry, d_parent);
	name = BPF_CORE_READ(dentry, d_name.name);
	len = bpf_probe_read_kernel_str(e->strings + tpkit_bound(used, STRINGS_SIZE - SOFDSNOOP_NAME_MAX),
					SOFDSNOOP_NAME_MAX, name);
	if (len <= 0)
		return 1;
	e->names_size += len;
	f->size += len;
	f->names++;
	if (parent == dentry) {
		/* A dentry of its own, in no directory: a socket, pipe or anon inode. */
		f->flags |= SOFDSNOOP_FILE_DETACHED;
		w->done = true;
		return 1;
	}
	w->dentry = parent;
	return 0;
}

static __always_inline void name_files(struct sofdsnoop_event *e)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct path root = BPF_CORE_READ(task, fs, root);

	e->names_size = 0;
	for (__u32 i = 0; i < SOFDSNOOP_MAX_FDS; i++) {
		struct sofdsnoop_file *f = &e->files[i];
		struct name_walk w = {.e = e, .f = f, .root = root};
		struct file *file;

		if (i >= e->fds_read)
			break;
		file = file_of(fdt, e->fds[i]);
		f->names = 0;
		f->size = 0;
		f->reserved = 0;
		if (!file) {
			f->ino = 0;
			f->mode = 0;
			f->flags = 0; /* not open (any more) */
			continue;
		}
		f->ino = BPF_CORE_READ(file, f_inode, i_ino);
		f->mode = BPF_CORE_READ(file, f_inode, i_mode);
		f->flags = SOFDSNOOP_FILE_OPEN;
		w.dentry = BPF_CORE_READ(file, f_path.dentry);
		w.mnt = BPF_CORE_READ(file, f_path.mnt);
		bpf_loop(SOFDSNOOP_WALK_STEPS, name_step, &w, 0);
		if (!w.done)
			f->flags |= SOFDSNOOP_FILE_CUT;
	}
	e->named = e->fds_read;
}

/* Reading the control messages, one cmsghdr a step. */
struct cmsg_walk {
	struct sofdsnoop_event *e;
	__u64 control;
	__u64 len; /* msg_controllen: what the caller gave, or what the kernel wrote back */
	__u64 off;
};

static long cmsg_step(__u64 i, struct cmsg_walk *w)
{
	struct sofdsnoop_event *e = w->e;
	struct cmsghdr h;
	__u64 n, room, take;

	if (w->off + CMSG_HDR_SIZE > w->len)
		return 1;
	if (bpf_probe_read_user(&h, sizeof(h), (void *)(w->control + w->off))) {
		e->fault |= SOFDSNOOP_FAULT_CONTROL;
		return 1;
	}
	if (h.cmsg_len < CMSG_HDR_SIZE || h.cmsg_len > w->len - w->off)
		return 1; /* as the kernel's CMSG_NXTHDR: the end */
	if (h.cmsg_level == SOL_SOCKET && h.cmsg_type == SCM_RIGHTS) {
		n = (h.cmsg_len - CMSG_HDR_SIZE) / sizeof(int);
		room = SOFDSNOOP_MAX_FDS - tpkit_bound(e->fds_read, SOFDSNOOP_MAX_FDS);
		take = n < room ? n : room;
		if (take) {
			__u64 at = tpkit_bound(e->fds_read, SOFDSNOOP_MAX_FDS - 1);
			__u64 bytes = tpkit_bound(take * sizeof(int), SOFDSNOOP_MAX_FDS * sizeof(int));

			/* at + take <= SOFDSNOOP_MAX_FDS: within fds. (A check of that here made 6.12's
			 * verifier lose e's pointer type.) */
			if (bpf_probe_read_user((void *)e->fds + at * sizeof(int), bytes,
						(void *)(w->control + w->off + CMSG_HDR_SIZE))) {
				e->fault |= SOFDSNOOP_FAULT_CONTROL;
				e->fd_count += n;
				return 1;
			}
			e->fds_read += take;
		}
		e->fd_count += n;
	}
	w->off += (h.cmsg_len + sizeof(long) - 1) & ~(sizeof(long) - 1);
	if (i == SOFDSNOOP_MAX_CMSGS - 1 && w->off + CMSG_HDR_SIZE <= w->len)
		e->cmsgs_cut = 1;
	return 0;
}

/* One message at the return of a call that passed it: an event when its control data holds
 * SCM_RIGHTS, was cut by the kernel (MSG_CTRUNC), or could not be read. */
static __always_inline void message(void *ctx, struct msg_call *c, __u32 id, __s64 ret,
				    const struct user_msghdr *hdr, __u32 index)
{
	bool receive = id == SOFDSNOOP_RECVMSG || id == SOFDSNOOP_RECVMMSG;
	struct sofdsnoop_event *e = tpkit_scratch(&scratch);
	struct user_msghdr msg;
	struct cmsg_walk w;

	if (!e)
		return;
	e->fault = 0;
	e->fd_count = 0;
	e->fds_read = 0;
	e->cmsgs_cut = 0;
	e->msg_flags = 0;
	e->named = 0;
	e->names_size = 0;
	if (bpf_probe_read_user(&msg, sizeof(msg), hdr)) {
		e->fault = SOFDSNOOP_FAULT_MSGHDR;
	} else {
		if (receive)
			e->msg_flags = msg.msg_flags;
		w.e = e;
		w.control = (__u64)msg.msg_control;
		w.len = msg.msg_controllen;
		/* 0, read back from map memory: a known 0 would stand for every step where Linux 6.1
		 * checks the callback once. */
		w.off = e->fds_read;
		if (w.control && w.len >= CMSG_HDR_SIZE)
			bpf_loop(SOFDSNOOP_MAX_CMSGS, cmsg_step, &w, 0);
		if (!e->fd_count && !e->fault && !e->cmsgs_cut && !(e->msg_flags & MSG_CTRUNC))
			return;
	}
	tpkit_fill_task_header(&e->task);
	e->ret = ret;
	e->sock_fd = c->sock_fd;
	e->call = id;
	e->msg_index = index;
	e->sock_ino = sock_ino(c->sock_fd);
	if (e->fds_read)
		name_files(e);
	tpkit_emit_prefix(ctx, e, __builtin_offsetof(struct sofdsnoop_event, strings) +
					  tpkit_bound(e->names_size, STRINGS_SIZE));
}

static __always_inline int msg_return(void *ctx, __u32 id, __s64 ret)
{
	struct msg_call *c = tpkit_call_return(&msg_calls, id);

	if (c && ret >= 0)
		message(ctx, c, id, ret, (const struct user_msghdr *)c->msg, 0);
	return 0;
}

struct mmsg_walk {
	void *ctx;
	struct msg_call *c;
	__u32 id;
	__s64 ret;
};

static long mmsg_step(__u64 i, struct mmsg_walk *w)
{
	message(w->ctx, w->c, w->id, w->ret,
		(const struct user_msghdr *)(w->c->msg + i * sizeof(struct mmsghdr)), i);
	return 0;
}

/* sendmmsg and recvmmsg return how many messages went through, the first ones of the vector. */
static __always_inline int mmsg_return(void *ctx, __u32 id, __s64 ret)
{
	struct msg_call *c = tpkit_call_return(&msg_calls, id);
	struct mmsg_walk w = {.ctx = ctx, .c = c, .id = id, .ret = ret};
	struct sofdsnoop_event *e;

	if (!c || ret <= 0)
		return 0;
	bpf_loop(ret < SOFDSNOOP_MAX_MMSGS ? ret : SOFDSNOOP_MAX_MMSGS, mmsg_step, &w, 0);
	if (ret <= SOFDSNOOP_MAX_MMSGS)
		return 0;
	/* Never silent: the messages not read, in one event. */
	e = tpkit_scratch(&scratch);
	if (!e)
		return 0;
	tpkit_fill_task_header(&e->task);
	e->ret = ret;
	e->sock_fd = c->sock_fd;
	e->call = id;
	e->msg_index = SOFDSNOOP_MAX_MMSGS;
	e->sock_ino = sock_ino(c->sock_fd);
	e->msg_flags = 0;
	e->fd_count = ret - SOFDSNOOP_MAX_MMSGS;
	e->fds_read = 0;
	e->fault = SOFDSNOOP_MMSG_CUT;
	e->cmsgs_cut = 0;
	e->named = 0;
	e->names_size = 0;
	tpkit_emit_prefix(ctx, e, __builtin_offsetof(struct sofdsnoop_event, strings));
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_sendmsg")
int sendmsg_entry(void *ctx)
{
	return call_entry(SOFDSNOOP_SENDMSG, tpkit_sys_enter_sendmsg_fd(ctx), tpkit_sys_enter_sendmsg_msg(ctx));
}

SEC("tracepoint/syscalls/sys_exit_sendmsg")
int sendmsg_exit(void *ctx)
{
	return msg_return(ctx, SOFDSNOOP_SENDMSG, tpkit_sys_exit_sendmsg_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_recvmsg")
int recvmsg_entry(void *ctx)
{
	return call_entry(SOFDSNOOP_RECVMSG, tpkit_sys_enter_recvmsg_fd(ctx), tpkit_sys_enter_recvmsg_msg(ctx));
}

SEC("tracepoint/syscalls/sys_exit_recvmsg")
int recvmsg_exit(void *ctx)
{
	return msg_return(ctx, SOFDSNOOP_RECVMSG, tpkit_sys_exit_recvmsg_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_sendmmsg")
int sendmmsg_entry(void *ctx)
{
	return call_entry(SOFDSNOOP_SENDMMSG, tpkit_sys_enter_sendmmsg_fd(ctx), tpkit_sys_enter_sendmmsg_mmsg(ctx));
}

SEC("tracepoint/syscalls/sys_exit_sendmmsg")
int sendmmsg_exit(void *ctx)
{
	return mmsg_return(ctx, SOFDSNOOP_SENDMMSG, tpkit_sys_exit_sendmmsg_ret(ctx));
}

SEC("tracepoint/syscalls/sys_enter_recvmmsg")
int recvmmsg_entry(void *ctx)
{
	return call_entry(SOFDSNOOP_RECVMMSG, tpkit_sys_enter_recvmmsg_fd(ctx), tpkit_sys_enter_recvmmsg_mmsg(ctx));
}

SEC("tracepoint/syscalls/sys_exit_recvmmsg")
int recvmmsg_exit(void *ctx)
{
	return mmsg_return(ctx, SOFDSNOOP_RECVMMSG, tpkit_sys_exit_recvmmsg_ret(ctx));
}
