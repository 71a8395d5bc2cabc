/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Futex contention: how long threads wait in FUTEX_WAIT, from syscalls:sys_enter_futex to
 * sys_exit_futex of the same thread, as log2 histograms by futex word (its user address), thread
 * (process with -s) and user stack. Only waits that were woken count: a wait that fails (the word
 * no longer held the expected value, EAGAIN; a timeout; a signal) is no contention measured. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/call.bpf.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/stack.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/syscalls_futex.h>
#include <tpkit/tools/futexctn.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full, and waits with no memory for their entry (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

/* include/uapi/linux/futex.h */
#define FUTEX_WAIT 0
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_CMD_MASK (~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))

#define FUTEXCTN_WAIT_CALL 1

const volatile bool milliseconds = false; /* -m */
const volatile bool summary = false;      /* -s: by process, no stacks */
const volatile __u64 target_lock = 0;     /* -l: this futex word only (0: every one) */

struct futexctn_call {
	struct tpkit_call call;
	__u64 uaddr;
};

TPKIT_CALL_MAP(struct futexctn_call) futex_calls SEC(".maps");
TPKIT_STACK_MAP(FUTEXCTN_MAX_STACK_DEPTH) stacks SEC(".maps");
/* Keys come and go with threads and locks: one copy every CPU shares (atomic adds), drained
 * every interval. */
TPKIT_SWAPPED_HALF(hists, BPF_MAP_TYPE_HASH, struct futexctn_key, struct futexctn_value)
	hists_a SEC(".maps"), hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(hists) hists SEC(".maps");
TPKIT_ZERO_VALUE(struct futexctn_value) empty_value SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_futex")
int futex_entry(void *ctx)
{
	__u64 uaddr = (__u64)tpkit_sys_enter_futex_uaddr(ctx);
	struct futexctn_call *c;

	if (((int)tpkit_sys_enter_futex_op(ctx) & FUTEX_CMD_MASK) != FUTEX_WAIT)
		return 0;
	if ((target_lock && uaddr != target_lock) || !tpkit_current_selected())
		return 0;
	c = tpkit_call_enter(&futex_calls, FUTEXCTN_WAIT_CALL, &tpkit_missed);
	if (c)
		c->uaddr = uaddr;
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit(void *ctx)
{
	struct futexctn_call *c = tpkit_call_return(&futex_calls, FUTEXCTN_WAIT_CALL);
	struct futexctn_key key = {};
	struct futexctn_value *value;
	__u64 id, ns;
	void *active;

	if (!c || tpkit_sys_exit_futex_ret(ctx) < 0)
		return 0;
	ns = bpf_ktime_get_ns() - c->call.start_ns;
	id = bpf_get_current_pid_tgid();
	key.uaddr = c->uaddr;
	key.pid = id >> 32;
	if (summary) {
		key.user_stack_id = FUTEXCTN_NO_STACK;
	} else {
		key.tid = (__u32)id;
		key.user_stack_id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	}
	active = TPKIT_ACTIVE_MAP(hists);
	if (!active)
		return 0;
	value = tpkit_lookup_or_zero(active, &key, &empty_value, &tpkit_missed);
	if (!value)
		return 0;
	tpkit_log2_hist_add_atomic(&value->hist, milliseconds ? ns / 1000000 : ns / 1000);
	__sync_fetch_and_add(&value->total_ns, ns);
	bpf_get_current_comm(value->comm, sizeof(value->comm));
	return 0;
}
