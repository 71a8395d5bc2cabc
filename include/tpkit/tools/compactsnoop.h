/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* compactsnoop's event, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/compactsnoop.h>): largest fields first. */
#ifndef TPKIT_COMPACTSNOOP_H
#define TPKIT_COMPACTSNOOP_H

#include <tpkit/task.h>

/* Frames kept per kernel stack (-K). */
#define COMPACTSNOOP_MAX_STACK_DEPTH 127
/* No stack taken (without -K); other negative IDs are bpf_get_stackid()'s -errno. */
#define COMPACTSNOOP_NO_STACK (-1)
/* The kernel's zone names are short ("DMA32", "Normal", "Movable", "Device"). */
#define COMPACTSNOOP_ZONE_NAME_LEN 8

/* One compaction run of one zone: compact_zone() from mm_compaction_begin to mm_compaction_end,
 * in the task that ran it (the writer of compact_memory, an allocating task, kcompactd). */
struct compactsnoop_event {
	struct tpkit_task_header task; /* at the run's end */
	__u64 latency_ns;              /* begin to end */
	/* The zone at the run's begin, in pages: its watermarks with their boost, as the
	 * kernel's min/low/high_wmark_pages() give them, and its free pages (NR_FREE_PAGES). */
	__u64 min_pages;
	__u64 low_pages;
	__u64 high_pages;
	__u64 free_pages;
	__s32 node;            /* the zone's node */
	__s32 zone_index;      /* its index in the node (ZONE_DMA 0, ...) */
	__s32 order;           /* compact_control's order; -1: the whole zone (compact_memory) */
	__s32 status;          /* enum compact_result that mm_compaction_end reports */
	__s32 kernel_stack_id; /* in the stacks map, or COMPACTSNOOP_NO_STACK, or -errno */
	__u32 mode;            /* enum migrate_mode: 0 async, 1 sync light, 2 sync */
	char zone[COMPACTSNOOP_ZONE_NAME_LEN]; /* the kernel's name of the zone */
};

#endif
