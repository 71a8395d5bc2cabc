/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test program for skipped runs: while it runs (a classic tracepoint program, at each getppid()
 * of the selected thread) it fires another tracepoint, bpf_trace:bpf_trace_printk, through
 * bpf_printk(). A classic tracepoint program attached there is then skipped by the kernel (one
 * BPF program already runs on the CPU: the shared bpf_prog_active guard); a raw tracepoint
 * program is not (its guard is its own), which count_printk shows. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 nested_tid = 0;
__u64 raw_printks = 0;

SEC("tracepoint/syscalls/sys_enter_getppid")
int printk_on_getppid(void *ctx)
{
	if ((__u32)bpf_get_current_pid_tgid() == nested_tid)
		bpf_printk("tpkit nested run");
	return 0;
}

SEC("raw_tp/bpf_trace_printk")
int count_printk(struct bpf_raw_tracepoint_args *ctx)
{
	if ((__u32)bpf_get_current_pid_tgid() == nested_tid)
		__sync_fetch_and_add(&raw_printks, 1);
	return 0;
}
