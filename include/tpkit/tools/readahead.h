/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* readahead's histogram key, shared by its BPF program and user space (installed for embedders
 * as <tpkit/tools/readahead.h>). */
#ifndef TPKIT_READAHEAD_H
#define TPKIT_READAHEAD_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif

/* Which tracepoint a histogram counts, and what it measures (in pages). */
enum readahead_event {
	READAHEAD_SYNC = 0,      /* page_cache_sync_ra: req_count, the pages the read asked for */
	READAHEAD_ASYNC = 1,     /* page_cache_async_ra: req_count */
	READAHEAD_ORDER = 2,     /* page_cache_ra_order: size, the window's pages */
	READAHEAD_UNBOUNDED = 3, /* page_cache_ra_unbounded: nr_to_read */
	READAHEAD_EVENTS = 4,
};

/* What the histograms are split by (rodata split_by). */
#define READAHEAD_SPLIT_NONE 0
#define READAHEAD_SPLIT_DEVICE 1 /* the file's superblock's device */
#define READAHEAD_SPLIT_FILE 2   /* the device and the inode */

struct readahead_key {
	__u64 ino;   /* with READAHEAD_SPLIT_FILE, else 0 */
	__u32 dev;   /* the kernel's dev_t (major << 20 | minor), with a split, else 0 */
	__u32 event; /* enum readahead_event */
};

#endif
