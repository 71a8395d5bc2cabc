/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Floor: the least streaming read() events costs (see floor_stream.bpf.h).
#include "vmlinux.h" /* types only: the structs used here carry no CO-RE relocations */
#include "floor_stream.bpf.h"
#include "floor_sys_enter.h"

SEC("tracepoint/syscalls/sys_enter_read")
int floor_stream_read(struct floor_sys_enter *ctx)
{
	floor_send(ctx, ctx->args[0], ctx->args[1], ctx->args[2]); /* fd, buf, count */
	return 0;
}
