/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Readahead as its tracepoints see it: the calls of page_cache_sync_ra() (a read found a page
 * missing) and page_cache_async_ra() (a read reached a page marked PG_readahead) with the pages
 * the read asked for, and the windows read ahead, page_cache_ra_order() and
 * page_cache_ra_unbounded() with their pages: one log2 histogram per event (and device, or file).
 * Raw tracepoints: the fields the kernel's records hold, read from the same arguments. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tools/readahead.h>
#include <tpkit/tp/readahead_raw.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

const volatile __u8 split_by = READAHEAD_SPLIT_NONE;

TPKIT_SWAPPED_HALF(hists, BPF_MAP_TYPE_HASH, struct readahead_key, struct tpkit_log2_hist)
	hists_a SEC(".maps"), hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(hists) hists SEC(".maps");
TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_hist SEC(".maps");

static __always_inline int count(struct inode *inode, __u32 event, __u64 pages)
{
	struct readahead_key key = {.event = event};
	struct tpkit_log2_hist *hist;
	void *active;

	if (!tpkit_current_selected())
		return 0;
	if (split_by != READAHEAD_SPLIT_NONE)
		key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	if (split_by == READAHEAD_SPLIT_FILE)
		key.ino = BPF_CORE_READ(inode, i_ino);
	active = TPKIT_ACTIVE_MAP(hists);
	if (!active)
		return 0;
	hist = tpkit_lookup_or_zero(active, &key, &empty_hist, &tpkit_missed);
	if (hist)
		tpkit_log2_hist_add_atomic(hist, pages);
	return 0;
}

SEC("raw_tp/page_cache_sync_ra")
int sync_ra(struct bpf_raw_tracepoint_args *ctx)
{
	return count(tpkit_page_cache_sync_ra_raw_inode(ctx), READAHEAD_SYNC,
		     tpkit_page_cache_sync_ra_raw_req_count(ctx));
}

SEC("raw_tp/page_cache_async_ra")
int async_ra(struct bpf_raw_tracepoint_args *ctx)
{
	return count(tpkit_page_cache_async_ra_raw_inode(ctx), READAHEAD_ASYNC,
		     tpkit_page_cache_async_ra_raw_req_count(ctx));
}

SEC("raw_tp/page_cache_ra_order")
int ra_order(struct bpf_raw_tracepoint_args *ctx)
{
	struct file_ra_state *ra = tpkit_page_cache_ra_order_raw_ra(ctx);

	return count(tpkit_page_cache_ra_order_raw_inode(ctx), READAHEAD_ORDER, BPF_CORE_READ(ra, size));
}

SEC("raw_tp/page_cache_ra_unbounded")
int ra_unbounded(struct bpf_raw_tracepoint_args *ctx)
{
	return count(tpkit_page_cache_ra_unbounded_raw_inode(ctx), READAHEAD_UNBOUNDED,
		     tpkit_page_cache_ra_unbounded_raw_nr_to_read(ctx));
}
