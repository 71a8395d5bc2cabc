/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test program for emit.bpf.h's events of varying size: the path of each openat(2) of the
 * selected thread, built in a scratch buffer and sent as long as it is, through the ring buffer
 * or the perf buffer (as user space chose). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include "kit_emit.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

TPKIT_SCRATCH(struct kit_emit_event) event_scratch SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_openat")
int openat_enter(struct syscall_trace_enter *ctx)
{
	struct kit_emit_event *e;
	long len;

	if (!tpkit_current_selected())
		return 0;
	e = tpkit_scratch(&event_scratch);
	if (!e)
		return 0;
	tpkit_fill_task_header(&e->task);
	e->reserved = 0;
	len = bpf_probe_read_user_str(e->path, sizeof(e->path), (const char *)ctx->args[1]);
	e->path_size = len > 0 ? len : 0;
	tpkit_emit_prefix(ctx, e, __builtin_offsetof(struct kit_emit_event, path) + e->path_size);
	return 0;
}
