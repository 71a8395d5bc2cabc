/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* numamove's counters, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/numamove.h>). */
#ifndef TPKIT_NUMAMOVE_H
#define TPKIT_NUMAMOVE_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif

/* Slots of the counters' array: one per enum migrate_reason (ten on 6.18); a reason past the
 * last slot is counted in it. */
#define NUMAMOVE_REASONS 16
/* migrate_pages() calls of one thread timed at once: a migration that allocates may compact,
 * and compaction migrates (a call inside a call). */
#define NUMAMOVE_MAX_NESTING 4

/* What migrate_pages() reported (mm_migrate_pages) for one reason, since the start: BPF only
 * adds to them. Pages are base pages (a THP counts its subpages). */
struct numamove_counts {
	__u64 calls;         /* migrate_pages() calls that ended */
	__u64 succeeded;     /* pages migrated */
	__u64 failed;        /* pages that could not be */
	__u64 thp_succeeded; /* THPs migrated */
	__u64 thp_failed;
	__u64 thp_split;
	__u64 timed_calls;   /* the calls whose start was seen too */
	__u64 time_ns;       /* their time, mm_migrate_pages_start to mm_migrate_pages */
};

/* A thread's migrate_pages() calls under way: their start times, the outermost first. */
struct numamove_starts {
	__u64 start_ns[NUMAMOVE_MAX_NESTING];
	__u32 depth; /* calls under way (more than NUMAMOVE_MAX_NESTING: the innermost untimed) */
	__u32 reserved;
};

#endif
