/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Page migrations by reason, from migrate:mm_migrate_pages_start and mm_migrate_pages:
 * migrate_pages() fires both in the migrating task, at its start and at its end with the pages
 * it migrated and failed to, whatever the reason (a NUMA hinting fault's misplaced page,
 * compaction, migrate_pages(2), mbind(2), memory failure, ...). libbpf-tools' numamove times
 * migrate_misplaced_folio() with kprobes, the NUMA reason alone. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/migrate.h>
#include <tpkit/tools/numamove.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NUMAMOVE_REASONS);
	__type(key, __u32);
	__type(value, struct numamove_counts);
} counts SEC(".maps");

/* Calls under way, by thread. A start with no room here is no loss: its call is counted when
 * it ends, untimed, which timed_calls below its calls says. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TPKIT_TIMING_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct numamove_starts);
} starts SEC(".maps");

SEC("tracepoint/migrate/mm_migrate_pages_start")
int migrate_start(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct numamove_starts none = {}, *s;
	__u32 depth;

	if (!tpkit_current_selected())
		return 0;
	s = bpf_map_lookup_elem(&starts, &tid);
	if (!s) {
		bpf_map_update_elem(&starts, &tid, &none, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&starts, &tid);
		if (!s)
			return 0;
	}
	depth = s->depth;
	if (depth < NUMAMOVE_MAX_NESTING)
		s->start_ns[depth] = bpf_ktime_get_ns();
	s->depth = depth + 1;
	return 0;
}

SEC("tracepoint/migrate/mm_migrate_pages")
int migrate_end(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__s32 reason = tpkit_mm_migrate_pages_reason(ctx);
	struct numamove_counts *c;
	struct numamove_starts *s;
	__u64 now = bpf_ktime_get_ns();
	__u32 slot, depth;

	if (!tpkit_current_selected())
		return 0;
	slot = reason < 0 || reason >= NUMAMOVE_REASONS ? NUMAMOVE_REASONS - 1 : (__u32)reason;
	c = bpf_map_lookup_elem(&counts, &slot);
	if (!c)
		return 0;
	/* Atomic: a run preempted on its CPU by another of the same program loses no increment. */
	__sync_fetch_and_add(&c->calls, 1);
	__sync_fetch_and_add(&c->succeeded, tpkit_mm_migrate_pages_succeeded(ctx));
	__sync_fetch_and_add(&c->failed, tpkit_mm_migrate_pages_failed(ctx));
	__sync_fetch_and_add(&c->thp_succeeded, tpkit_mm_migrate_pages_thp_succeeded(ctx));
	__sync_fetch_and_add(&c->thp_failed, tpkit_mm_migrate_pages_thp_failed(ctx));
	__sync_fetch_and_add(&c->thp_split, tpkit_mm_migrate_pages_thp_split(ctx));
	/* The innermost call under way is this one: no start when it began before the tool. */
	s = bpf_map_lookup_elem(&starts, &tid);
	if (!s || s->depth == 0)
		return 0;
	depth = s->depth - 1;
	s->depth = depth;
	if (depth < NUMAMOVE_MAX_NESTING) {
		__sync_fetch_and_add(&c->timed_calls, 1);
		__sync_fetch_and_add(&c->time_ns, now - s->start_ns[depth]);
	}
	if (depth == 0)
		bpf_map_delete_elem(&starts, &tid);
	return 0;
}
