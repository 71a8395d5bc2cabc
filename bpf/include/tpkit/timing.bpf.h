/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The time between two events of one thing: a thread (key: its tid, __u32) from going to sleep
 * to waking up, a request (key: its kernel address, __u64) from issue to completion.
 *
 *	TPKIT_TIMING_MAP(__u32) starts SEC(".maps");
 *
 *	at the first event:   tpkit_timing_start(&starts, &tid, &tpkit_missed);
 *	at the second event:  if (tpkit_timing_elapsed(&starts, &tid, &ns)) add ns somewhere
 *
 * The map is a hash of start times (bpf_ktime_get_ns), TPKIT_TIMING_MAX_ENTRIES keys unless
 * user space sets max_entries before load. A start that finds the map full is counted in the
 * tool's tpkit_missed (maps.bpf.h) — the tool reports it (tpkit::MissedWatch) — and its end then
 * has no start. A plain hash, not an LRU one, so that a full map is seen and counted rather than
 * older starts silently evicted. tid 0 is every CPU's idle task: never a key. */
#ifndef TPKIT_TIMING_BPF_H
#define TPKIT_TIMING_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/limits.h>
#include <tpkit/maps.bpf.h>

#define TPKIT_TIMING_MAP(key_type)                                \
	struct {                                                  \
		__uint(type, BPF_MAP_TYPE_HASH);                  \
		__uint(max_entries, TPKIT_TIMING_MAX_ENTRIES);    \
		__type(key, key_type);                            \
		__type(value, __u64);                             \
	}

/* Records now as key's start (a later start of the same key replaces it); a full map is counted
 * in missed. */
static __always_inline void tpkit_timing_start(void *map, const void *key, void *missed)
{
	__u64 now = bpf_ktime_get_ns();

	if (bpf_map_update_elem(map, key, &now, BPF_ANY))
		tpkit_count(missed);
}

/* Nanoseconds since key's start into *ns, and the start forgotten. False when no start was
 * seen: the first event happened before the program was attached (a thread already asleep, a
 * request already issued when the tool started), or the map was full at its start (counted). */
static __always_inline bool tpkit_timing_elapsed(void *map, const void *key, __u64 *ns)
{
	__u64 *start = bpf_map_lookup_elem(map, key);

	if (!start)
		return false;
	*ns = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(map, key);
	return true;
}

#endif
