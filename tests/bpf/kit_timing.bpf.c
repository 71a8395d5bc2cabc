/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test program for timing.bpf.h: how long each nanosleep of the selected process took, from
 * sys_enter_nanosleep to sys_exit_nanosleep, keyed by tid. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include "kit_timing.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");
/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

TPKIT_TIMING_MAP(__u32) sleep_starts SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_nanosleep")
int nanosleep_enter(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (tpkit_current_selected())
		tpkit_timing_start(&sleep_starts, &tid, &tpkit_missed);
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
