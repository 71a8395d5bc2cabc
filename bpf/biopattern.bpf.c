/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Random and sequential block I/O per disk: a completion is sequential when it begins at the
 * sector where the disk's previous completion ended. Raw block_rq_complete, the request read with
 * CO-RE. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/block.bpf.h>
#include <tpkit/tools/biopattern.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

#define MAX_DISKS 1024

/* At a block completion's rate: one copy every CPU shares (atomic adds), whose preallocation
 * costs a tenth of a per-CPU one's at start-up. */
TPKIT_SWAPPED_HALF(counts, BPF_MAP_TYPE_HASH, __u32, struct biopattern_counts)
	counts_a SEC(".maps"), counts_b SEC(".maps");
TPKIT_SWAPPED_SLOT(counts) counts SEC(".maps");
TPKIT_ZERO_VALUE(struct biopattern_counts) zero_counts SEC(".maps");

/* Where each disk's last completion ended, kept across intervals (a disk's first completion
 * seen has nothing to follow: it is not counted). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_DISKS);
	__type(key, __u32);
	__type(value, __u64);
} next_sectors SEC(".maps");

SEC("raw_tp/block_rq_complete")
int rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	__u32 nr_bytes = (__u32)ctx->args[2], dev;
	__u64 sector, end, *next;
	struct biopattern_counts *c;
	void *active;

	/* The task filters see the task current at the completion: an interrupted one, or the
	 * driver's worker, seldom the one that submitted the I/O. */
	if (!tpkit_request_selected(rq) || !tpkit_current_selected())
		return 0;
	dev = tpkit_request_dev(rq);
	sector = tpkit_request_sector(rq);
	end = sector + nr_bytes / 512;
	next = bpf_map_lookup_elem(&next_sectors, &dev);
	if (!next) {
		tpkit_lookup_or_init(&next_sectors, &dev, &end, &tpkit_missed);
		return 0;
	}
	active = TPKIT_ACTIVE_MAP(counts);
	c = active ? tpkit_lookup_or_zero(active, &dev, &zero_counts, &tpkit_missed) : NULL;
	if (c) {
		if (*next == sector)
			__sync_fetch_and_add(&c->sequential, 1);
		else
			__sync_fetch_and_add(&c->random, 1);
		__sync_fetch_and_add(&c->bytes, nr_bytes);
	}
	*next = end;
	return 0;
}
