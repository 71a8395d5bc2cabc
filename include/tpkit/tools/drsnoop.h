/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* drsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/drsnoop.h>): largest fields first, no holes. */
#ifndef TPKIT_DRSNOOP_H
#define TPKIT_DRSNOOP_H

#include <tpkit/task.h>

/* Which reclaim stalled the task. */
enum drsnoop_kind {
	DRSNOOP_DIRECT = 0, /* the page allocator found too little free memory (try_to_free_pages) */
	DRSNOOP_MEMCG = 1,  /* a memory cgroup hit its limit (try_to_free_mem_cgroup_pages) */
};

struct drsnoop_event {
	struct tpkit_task_header task; /* the task that reclaimed, and when its reclaim ended */
	__u64 latency_ns;
	__u64 nr_reclaimed;  /* pages */
	__u64 nr_free_pages; /* the whole machine's free pages at the end (with -e), else 0 */
	__u32 kind;          /* enum drsnoop_kind */
	__u32 reserved;
};

#endif
