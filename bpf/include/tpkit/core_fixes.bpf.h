/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Kernel changes that moved what a tool reads, each behind one getter that works on both sides
 * of the change: a `___old` flavour of the type as it was before, and the choice made when the
 * program loads (bpf_core_field_exists, bpf_core_type_exists: constants then, so the verifier
 * drops the other side). Each names the commit it works around; the reference kernels (6.1,
 * 6.18) are both after every one of them.
 *
 * Task states are the kernel's own bits (include/linux/sched.h). Compare them masked with
 * TPKIT_TASK_REPORT, as the kernel's sched_switch record does: the bits above say how a task
 * waits rather than what for, and their values move (a nanosleep reads 0x2001 since f5d39b020809
 * "freezer,sched: Rewrite core freezer logic", 6.1, which added TASK_FREEZABLE 0x2000). */
#ifndef TPKIT_CORE_FIXES_BPF_H
#define TPKIT_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#define TPKIT_TASK_RUNNING 0
#define TPKIT_TASK_INTERRUPTIBLE 1
#define TPKIT_TASK_UNINTERRUPTIBLE 2
/* TASK_REPORT: running, (un)interruptible, stopped, traced, dead, zombie, parked. */
#define TPKIT_TASK_REPORT 0x7f

/* 2f064a59a11f "sched: Change task_struct::state" (5.14) renamed task_struct::state (long) to
 * __state (unsigned int), so that every reader goes through READ_ONCE. */
struct task_struct___old {
	volatile long state;
} __attribute__((preserve_access_index));

/* The task's state now (a task is a struct task_struct *). */
static __always_inline __s64 tpkit_task_state(void *task)
{
	struct task_struct *t = task;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___old *)task, state);
}

/* fa2c3254d7cf "sched/tracing: Don't re-read p->state when emitting sched_switch event" (5.18)
 * gave sched_switch a fourth argument, prev_state: the state __schedule() acted on. Reading
 * prev->__state in the tracepoint instead can see a wakeup that came in meanwhile (a sleeping
 * task reported as running). Raw tracepoint arguments have no struct to test for a field; their
 * BTF typedef does: libbpf finds a type only where it is compatible, and function prototypes are
 * compatible only with the same number of arguments, so the three-argument flavour exists
 * exactly on kernels before the change. */
typedef void (*btf_trace_sched_switch___old)(void *, bool, struct task_struct *, struct task_struct *);

/* prev's state from a raw sched_switch tracepoint's arguments (ctx of SEC("raw_tp/sched_switch")):
 * the argument where the kernel passes it, else prev's state read now. */
static __always_inline __s64 tpkit_sched_switch_prev_state(__u64 *ctx)
{
	if (bpf_core_type_exists(btf_trace_sched_switch___old))
		return tpkit_task_state((void *)ctx[1]);
	return (__u32)ctx[3];
}

/* Whether prev stays runnable after a raw sched_switch (ctx as above): it was preempted, or it
 * was not going to sleep. A task preempted between setting a sleeping state and calling
 * schedule() keeps its run-queue place although prev_state names the sleep: the kernel's own
 * record reports it as R+ (__trace_sched_switch_state) for that reason. args[0] is preempt. */
static __always_inline bool tpkit_sched_switch_prev_runnable(__u64 *ctx)
{
	return (bool)ctx[0] || tpkit_sched_switch_prev_state(ctx) == TPKIT_TASK_RUNNING;
}

/* f3fa33acca9f "block: remove the ->rq_disk field in struct request" (5.17): a request's disk is
 * its queue's (request_queue::disk, added by that series). */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/* The disk a block request (a struct request *) goes to; NULL for a queue without one. */
static __always_inline struct gendisk *tpkit_request_disk(void *request)
{
	struct request *rq = request;

	if (bpf_core_field_exists(((struct request___old *)request)->rq_disk))
		return BPF_CORE_READ((struct request___old *)request, rq_disk);
	return BPF_CORE_READ(rq, q, disk);
}

/* 3f7e753206bb "inet: move inet->freebind to inet->inet_flags", 4bd0623f04ee "inet: move
 * inet->transparent to inet->inet_flags" and ca571e2eb7eb "inet: move inet->bind_address_no_port
 * to inet->inet_flags" (6.6) turned three bit-fields of struct inet_sock into bits of inet_flags
 * (INET_FLAGS_FREEBIND, _TRANSPARENT, _BIND_ADDRESS_NO_PORT: an anonymous enum, which CO-RE
 * cannot relocate; its values are those of vmlinux.h). */
struct inet_sock___old {
	__u8 freebind : 1;
	__u8 transparent : 1;
	__u8 bind_address_no_port : 1;
} __attribute__((preserve_access_index));

#define TPKIT_INET_FREEBIND 1u             /* IP_FREEBIND */
#define TPKIT_INET_TRANSPARENT 2u          /* IP_TRANSPARENT */
#define TPKIT_INET_BIND_ADDRESS_NO_PORT 4u /* IP_BIND_ADDRESS_NO_PORT */

/* The IP_FREEBIND, IP_TRANSPARENT and IP_BIND_ADDRESS_NO_PORT options of an inet socket (a
 * struct inet_sock *), as TPKIT_INET_* bits. */
static __always_inline __u32 tpkit_inet_bind_options(void *inet_sock)
{
	struct inet_sock___old *old = inet_sock;
	unsigned long flags;

	if (bpf_core_field_exists(old->freebind))
		return (BPF_CORE_READ_BITFIELD_PROBED(old, freebind) ? TPKIT_INET_FREEBIND : 0) |
		       (BPF_CORE_READ_BITFIELD_PROBED(old, transparent) ? TPKIT_INET_TRANSPARENT : 0) |
		       (BPF_CORE_READ_BITFIELD_PROBED(old, bind_address_no_port) ?
				TPKIT_INET_BIND_ADDRESS_NO_PORT : 0);
	flags = BPF_CORE_READ((struct inet_sock *)inet_sock, inet_flags);
	return (flags & (1ul << INET_FLAGS_FREEBIND) ? TPKIT_INET_FREEBIND : 0) |
	       (flags & (1ul << INET_FLAGS_TRANSPARENT) ? TPKIT_INET_TRANSPARENT : 0) |
	       (flags & (1ul << INET_FLAGS_BIND_ADDRESS_NO_PORT) ? TPKIT_INET_BIND_ADDRESS_NO_PORT : 0);
}

/* tcp:tcp_retransmit_skb gained a third argument, err, when the kernel began to fire it for
 * retransmits that failed too (-EBUSY while the original is still queued in the host, an
 * allocation failure): earlier kernels (6.1) fire it only for a segment sent, with two arguments.
 * As for sched_switch above, the two-argument flavour of the typedef exists only there. */
typedef void (*btf_trace_tcp_retransmit_skb___old)(void *, const struct sock *, const struct sk_buff *);

/* The retransmit's error from a raw tcp_retransmit_skb tracepoint's arguments: 0 for a segment
 * sent, which is all that kernels without the argument report. */
static __always_inline int tpkit_tcp_retransmit_skb_err(__u64 *ctx)
{
	if (bpf_core_type_exists(btf_trace_tcp_retransmit_skb___old))
		return 0;
	return (int)ctx[2];
}

#endif
