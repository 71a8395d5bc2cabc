/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Test program for timing.bpf.h: how long each nanosleep of the selected process took, from
// sys_enter_nanosleep to sys_exit_nanosleep, keyed by tid.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include "kit_timing.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

TPKIT_TIMING_MAP(sleep_starts, __u32);

SEC("tracepoint/syscalls/sys_enter_nanosleep")
int nanosleep_enter(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (tpkit_current_selected())
		tpkit_timing_start(&sleep_starts, &tid);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_nanosleep")
int nanosleep_exit(void *ctx)
{
	struct kit_timing_event event = {};

	event.tid = (__u32)bpf_get_current_pid_tgid();
	if (!tpkit_current_selected() || !tpkit_timing_elapsed(&sleep_starts, &event.tid, &event.elapsed_ns))
		return 0;
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
