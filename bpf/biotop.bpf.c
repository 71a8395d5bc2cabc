/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Block I/O by the task that submitted it, per disk and direction: requests, bytes and time at
 * the device, drained every interval. Raw tracepoints reading the request with CO-RE; the
 * submitter from block_io_start where the kernel has it (6.5+), else the task that inserts or
 * issues the request. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/block.bpf.h>
#include <tpkit/tools/biotop.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

struct tpkit_request_map requests SEC(".maps");
/* Up to 10,240 keys, at a block request's rate: one copy every CPU shares (atomic adds), whose
 * preallocation costs a tenth of a per-CPU one's at start-up. */
TPKIT_SWAPPED_HALF(counts, BPF_MAP_TYPE_HASH, struct biotop_key, struct biotop_counts)
	counts_a SEC(".maps"), counts_b SEC(".maps");
TPKIT_SWAPPED_SLOT(counts) counts SEC(".maps");
TPKIT_ZERO_VALUE(struct biotop_counts) zero_counts SEC(".maps");

/* Loaded only where the kernel has block_io_start (tpkit::follow_requests_from_submission()). */
SEC("raw_tp/block_io_start")
int io_start(struct bpf_raw_tracepoint_args *ctx)
{
	tpkit_request_submitted(&requests, (struct request *)ctx->args[0], &tpkit_missed);
	return 0;
}

SEC("raw_tp/block_rq_insert")
int rq_insert(struct bpf_raw_tracepoint_args *ctx)
{
	tpkit_request_step(&requests, (struct request *)ctx->args[0], false, &tpkit_missed);
	return 0;
}

SEC("raw_tp/block_rq_issue")
int rq_issue(struct bpf_raw_tracepoint_args *ctx)
{
	tpkit_request_step(&requests, (struct request *)ctx->args[0], true, &tpkit_missed);
	return 0;
}

SEC("raw_tp/block_rq_complete")
int rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	__u32 nr_bytes = (__u32)ctx->args[2];
	struct tpkit_request_start start;
	struct biotop_key key = {};
	struct biotop_counts *c;
	bool done = tpkit_request_done(rq, nr_bytes);
	void *active;

	if (!tpkit_request_completed(&requests, rq, nr_bytes, &start))
		return 0;
	key.pid = start.pid;
	key.dev = tpkit_request_dev(rq);
	key.write = tpkit_request_op(rq) == TPKIT_REQ_OP_WRITE;
	__builtin_memcpy(key.comm, start.comm, sizeof(key.comm));
	active = TPKIT_ACTIVE_MAP(counts);
	c = active ? tpkit_lookup_or_zero(active, &key, &zero_counts, &tpkit_missed) : NULL;
	if (!c)
		return 0;
	__sync_fetch_and_add(&c->bytes, nr_bytes);
	/* A request completed in parts counts once, with its whole time, at its last part. */
	if (done) {
		__sync_fetch_and_add(&c->io, 1);
		__sync_fetch_and_add(&c->ns, bpf_ktime_get_ns() - start.issued_ns);
	}
	return 0;
}
