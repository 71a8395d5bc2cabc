/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every capability check, from the raw tracepoint capability:cap_capable (Linux 6.14 and later),
 * which the kernel hits after cap_capable() has decided: the capability, the verdict, and the
 * user namespace of the resource. A raw tracepoint: capability checks are frequent (every
 * privileged file, network and namespace operation), and its arguments need no record built. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tools/capable.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

const volatile __u8 unique_by = CAPABLE_UNIQUE_OFF;

struct unique_key {
	__u64 owner; /* tgid or cgroup id */
	__s32 cap;
	__s32 denied;
};

/* Checks already shown with --unique. An LRU: on a machine with more owners than this, the
 * oldest are forgotten and may be shown again, rather than new ones never shown. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct unique_key);
	__type(value, __u8);
} shown SEC(".maps");

static __always_inline bool shown_before(__s32 cap, __s32 ret)
{
	struct unique_key key = {.cap = cap, .denied = ret != 0};
	__u8 yes = 1;

	if (unique_by == CAPABLE_UNIQUE_OFF)
		return false;
	key.owner = unique_by == CAPABLE_UNIQUE_PID ? bpf_get_current_pid_tgid() >> 32
						    : bpf_get_current_cgroup_id();
	return bpf_map_update_elem(&shown, &key, &yes, BPF_NOEXIST) != 0;
}

/* TP_PROTO(const struct cred *cred, struct user_namespace *target_ns,
 *          const struct user_namespace *capable_ns, int cap, int ret) */
SEC("raw_tp/cap_capable")
int cap_check(struct bpf_raw_tracepoint_args *ctx)
{
	struct user_namespace *target_ns = (struct user_namespace *)ctx->args[1];
	__s32 cap = (__s32)ctx->args[3], ret = (__s32)ctx->args[4];
	struct capable_event event = {};

	if (!tpkit_current_selected() || shown_before(cap, ret))
		return 0;
	tpkit_fill_task_header(&event.task);
	event.cap = cap;
	event.ret = ret;
	event.user_ns = BPF_CORE_READ(target_ns, ns.inum);
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
