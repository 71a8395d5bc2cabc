/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Direct reclaim stalls, one event each as it ends: the raw tracepoints vmscan's
 * mm_vmscan_direct_reclaim_begin/end (the page allocator reclaiming in the allocating task) and
 * mm_vmscan_memcg_reclaim_begin/end (a memory cgroup at its limit, reclaiming in the charging
 * task). The two never nest in one task: a cgroup charge follows the allocation. Raw
 * tracepoints: their arguments are all a begin/end pair needs, and they detach at once. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include <tpkit/tools/drsnoop.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");
/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

/* -e: the free pages counter, vm_zone_stat[NR_FREE_PAGES], at the address /proc/kallsyms gives
 * (0: not asked for). Read there by the tool, only with -e: an extern __ksym would have libbpf
 * read the whole of /proc/kallsyms at every load, most of a start-up. */
const volatile __u64 vm_zone_stat_address = 0;

TPKIT_TIMING_MAP(__u32) reclaim_start SEC(".maps");

static __always_inline int reclaim_begins(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (tpkit_current_selected())
		tpkit_timing_start(&reclaim_start, &tid, &tpkit_missed);
	return 0;
}

static __always_inline int reclaim_ends(void *ctx, __u64 nr_reclaimed, enum drsnoop_kind kind)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct drsnoop_event event = {};
	__u64 ns;

	if (!tpkit_timing_elapsed(&reclaim_start, &tid, &ns))
		return 0;
	tpkit_fill_task_header(&event.task);
	event.latency_ns = ns;
	event.nr_reclaimed = nr_reclaimed;
	event.kind = kind;
	if (vm_zone_stat_address) {
		const long *counters = (const long *)vm_zone_stat_address;
		long free_pages = 0;

		bpf_probe_read_kernel(&free_pages, sizeof(free_pages),
				      counters + bpf_core_enum_value(enum zone_stat_item, NR_FREE_PAGES));
		event.nr_free_pages = free_pages > 0 ? free_pages : 0;
	}
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}

/* TP_PROTO(int order, gfp_t gfp_flags) */
SEC("raw_tp/mm_vmscan_direct_reclaim_begin")
int direct_begin(struct bpf_raw_tracepoint_args *ctx)
{
	return reclaim_begins();
}

/* TP_PROTO(unsigned long nr_reclaimed) */
SEC("raw_tp/mm_vmscan_direct_reclaim_end")
int direct_end(struct bpf_raw_tracepoint_args *ctx)
{
	return reclaim_ends(ctx, ctx->args[0], DRSNOOP_DIRECT);
}

SEC("raw_tp/mm_vmscan_memcg_reclaim_begin")
int memcg_begin(struct bpf_raw_tracepoint_args *ctx)
{
	return reclaim_begins();
}

SEC("raw_tp/mm_vmscan_memcg_reclaim_end")
int memcg_end(struct bpf_raw_tracepoint_args *ctx)
{
	return reclaim_ends(ctx, ctx->args[0], DRSNOOP_MEMCG);
}
