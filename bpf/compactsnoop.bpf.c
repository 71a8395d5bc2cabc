/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every compaction run of a zone, from the raw tracepoints mm_compaction_begin and
 * mm_compaction_end: compact_zone() fires both in the task that compacts, with its
 * compact_control, which names the zone, the order and the mode on every kernel (bcc takes them
 * from mm_compaction_suitable, which compact_zone() of 6.1 fires for every run but that of 6.18
 * no longer for a whole-zone compaction). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/stack.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/compaction_raw.h>
#include <tpkit/tools/compactsnoop.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

const volatile bool kernel_stacks = false;

TPKIT_STACK_MAP(COMPACTSNOOP_MAX_STACK_DEPTH) stacks SEC(".maps");

/* Runs begun, by thread: compact_zone() does not nest, and ends in the thread it began in. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TPKIT_TIMING_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct compactsnoop_event);
} begun SEC(".maps");

/* A stack copy of the event is too big beside the program's other locals: one per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct compactsnoop_event);
} scratch SEC(".maps");

SEC("raw_tp/mm_compaction_begin")
int compaction_begin(struct bpf_raw_tracepoint_args *ctx)
{
	struct compact_control *cc = tpkit_mm_compaction_begin_raw_cc(ctx);
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	struct compactsnoop_event *e;
	struct pglist_data *pgdat;
	struct zone *zone;
	const char *name;
	__u64 boost;

	if (!tpkit_current_selected())
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	zone = BPF_CORE_READ(cc, zone);
	pgdat = BPF_CORE_READ(zone, zone_pgdat);
	e->node = BPF_CORE_READ(pgdat, node_id);
	/* zone_idx(): the zone's place in its node's array. */
	e->zone_index = ((__u64)zone - (__u64)&pgdat->node_zones[0]) / bpf_core_type_size(struct zone);
	name = BPF_CORE_READ(zone, name);
	__builtin_memset(e->zone, 0, sizeof(e->zone));
	bpf_probe_read_kernel_str(e->zone, sizeof(e->zone), name);
	e->order = BPF_CORE_READ(cc, order);
	e->mode = BPF_CORE_READ(cc, mode);
	boost = BPF_CORE_READ(zone, watermark_boost);
	e->min_pages = BPF_CORE_READ(zone, _watermark[bpf_core_enum_value(enum zone_watermarks, WMARK_MIN)]) + boost;
	e->low_pages = BPF_CORE_READ(zone, _watermark[bpf_core_enum_value(enum zone_watermarks, WMARK_LOW)]) + boost;
	e->high_pages = BPF_CORE_READ(zone, _watermark[bpf_core_enum_value(enum zone_watermarks, WMARK_HIGH)]) + boost;
	e->free_pages = BPF_CORE_READ(zone, vm_stat[bpf_core_enum_value(enum zone_stat_item, NR_FREE_PAGES)].counter);
	e->status = 0;
	e->kernel_stack_id = COMPACTSNOOP_NO_STACK;
	e->task.timestamp_ns = bpf_ktime_get_ns();
	/* A run whose begin cannot be kept is an event lost: said with the others. */
	if (bpf_map_update_elem(&begun, &tid, e, BPF_ANY))
		tpkit_count(&tpkit_drops);
	return 0;
}

SEC("raw_tp/mm_compaction_end")
int compaction_end(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct compactsnoop_event *e;
	__u64 began;

	e = bpf_map_lookup_elem(&begun, &tid);
	if (!e)
		return 0;
	began = e->task.timestamp_ns;
	tpkit_fill_task_header(&e->task);
	e->latency_ns = e->task.timestamp_ns - began;
	e->status = tpkit_mm_compaction_end_raw_status(ctx);
	e->kernel_stack_id = kernel_stacks ? bpf_get_stackid(ctx, &stacks, 0) : COMPACTSNOOP_NO_STACK;
	tpkit_emit(ctx, e, sizeof(*e));
	bpf_map_delete_elem(&begun, &tid);
	return 0;
}
