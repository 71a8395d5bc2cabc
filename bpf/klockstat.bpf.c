/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Kernel lock contention from lock:contention_begin to lock:contention_end of the same thread
 * and lock, summed by the kernel stack where it began (and the lock, the thread), as perf lock
 * contention counts it. Hold times are not seen: no tracepoint marks a release.
 *
 * A thread may be in more than one contention at once: a mutex's waiter contends for the
 * mutex's wait_lock spinlock, an interrupt contends for another lock on top. Each thread keeps
 * a small stack of its pending begins, and an end closes the innermost pending begin of its
 * lock. A mutex's slow path begins twice for one wait (once as it spins, MUTEX|SPIN, then as it
 * sleeps, MUTEX) and ends once: a begin of the lock already innermost continues that wait, from
 * its first begin and stack, the flags of both. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/stack.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/lock_raw.h>
#include <tpkit/tools/klockstat.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full, begins nested too deep and begins whose end was never
 * seen (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

const volatile bool by_lock = false;    /* --by-lock: the lock's address in the key */
const volatile bool per_thread = false; /* -P: the thread in the key, not the stack */
const volatile __u64 target_lock = 0;   /* -L: this lock only (0: every one) */

struct pending {
	__u64 lock[KLOCKSTAT_NESTING];
	__u64 start_ns[KLOCKSTAT_NESTING];
	__s32 stack_id[KLOCKSTAT_NESTING];
	__u32 flags[KLOCKSTAT_NESTING];
	__u32 depth;
};

/* Each thread's pending begins, while it has any. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct pending);
} pending SEC(".maps");

TPKIT_STACK_MAP(KLOCKSTAT_MAX_STACK_DEPTH) stacks SEC(".maps");
/* Keys come and go with callers and locks: one copy every CPU shares (atomic adds), drained
 * every interval. */
TPKIT_SWAPPED_HALF(waits, BPF_MAP_TYPE_HASH, struct klockstat_key, struct klockstat_value)
	waits_a SEC(".maps"), waits_b SEC(".maps");
TPKIT_SWAPPED_SLOT(waits) waits SEC(".maps");
TPKIT_ZERO_VALUE(struct pending) empty_pending SEC(".maps");
TPKIT_ZERO_VALUE(struct klockstat_value) empty_value SEC(".maps");

SEC("raw_tp/contention_begin")
int wait_begin(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 lock = (__u64)tpkit_contention_begin_raw_lock(ctx);
	__u32 flags = tpkit_contention_begin_raw_flags(ctx);
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending *p;
	__u32 d;

	if ((target_lock && lock != target_lock) || !tpkit_current_selected())
		return 0;
	p = tpkit_lookup_or_zero(&pending, &tid, &empty_pending, &tpkit_missed);
	if (!p)
		return 0;
	d = p->depth;
	if (d > 0 && d <= KLOCKSTAT_NESTING) {
		/* Masked, and hidden from the compiler so that it keeps the mask: 6.1's verifier
		 * does not learn d > 0 from the test above. */
		__u32 top = d - 1;

		asm volatile("" : "+r"(top));
		top &= KLOCKSTAT_NESTING - 1;
		if (p->lock[top] == lock) {
			p->flags[top] |= flags;
			return 0;
		}
	}
	if (d >= KLOCKSTAT_NESTING) {
		tpkit_count(&tpkit_missed);
		return 0;
	}
	p->lock[d] = lock;
	p->flags[d] = flags;
	p->stack_id[d] = per_thread ? KLOCKSTAT_NO_STACK : bpf_get_stackid(ctx, &stacks, 0);
	p->start_ns[d] = bpf_ktime_get_ns();
	p->depth = d + 1;
	return 0;
}

SEC("raw_tp/contention_end")
int wait_end(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 lock = (__u64)tpkit_contention_end_raw_lock(ctx);
	__u64 now = bpf_ktime_get_ns(), ns;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct klockstat_key key = {};
	struct klockstat_value *value;
	struct pending *p;
	__u32 d, i, at = KLOCKSTAT_NESTING;

	p = bpf_map_lookup_elem(&pending, &tid);
	if (!p)
		return 0; /* began before tracing, or not selected */
	d = p->depth;
	if (d > KLOCKSTAT_NESTING)
		return 0;
	/* From the innermost; each index a constant once unrolled. */
	for (i = 0; i < KLOCKSTAT_NESTING; i++) {
		__u32 j = KLOCKSTAT_NESTING - 1 - i;

		if (j < d && p->lock[j] == lock) {
			at = j;
			break;
		}
	}
	if (at >= KLOCKSTAT_NESTING)
		return 0;
	/* Begins inside this one whose end never came (a run the kernel skipped) are lost. */
	for (i = at + 1; i < KLOCKSTAT_NESTING; i++)
		if (i < d)
			tpkit_count(&tpkit_missed);
	ns = now - p->start_ns[at];
	key.stack_id = p->stack_id[at];
	key.flags = p->flags[at];
	if (by_lock || target_lock)
		key.lock = lock;
	if (per_thread) {
		key.pid = bpf_get_current_pid_tgid() >> 32;
		key.tid = tid;
	}
	p->depth = at;
	if (at == 0)
		bpf_map_delete_elem(&pending, &tid);
	value = tpkit_lookup_or_zero(TPKIT_ACTIVE_MAP(waits), &key, &empty_value, &tpkit_missed);
	if (!value)
		return 0;
	__sync_fetch_and_add(&value->count, 1);
	__sync_fetch_and_add(&value->total_ns, ns);
	/* As libbpf-tools': two CPUs ending a wait of one key at the same instant may keep the
	 * shorter (BPF's compare-and-swap needs a newer instruction set than tpkit builds for). */
	if (ns > value->max_ns)
		value->max_ns = ns;
	bpf_get_current_comm(value->comm, sizeof(value->comm));
	return 0;
}
