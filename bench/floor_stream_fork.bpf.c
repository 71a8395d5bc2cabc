/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Floor: the least streaming forks costs (see floor_stream.bpf.h). The fork record's layout
// changed between kernels (6.1: parent_comm inline; 6.18: __data_loc), so read it with CO-RE.
#include "vmlinux.h"
#include "floor_stream.bpf.h"

SEC("tracepoint/sched/sched_process_fork")
int floor_stream_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	floor_send(ctx, ctx->parent_pid, ctx->child_pid, 0);
	return 0;
}
