/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test program: how often the threads of one process were switched away from, counted by a raw
 * tracepoint program that runs while that thread is still current (bpf_visibility.hpp). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 watched_tgid = 0;
__u64 switches = 0;

SEC("raw_tp/sched_switch")
int count_switch(struct bpf_raw_tracepoint_args *ctx)
{
	if (bpf_get_current_pid_tgid() >> 32 == watched_tgid)
		__sync_fetch_and_add(&switches, 1);
	return 0;
}
