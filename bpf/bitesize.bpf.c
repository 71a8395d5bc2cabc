/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Block I/O sizes (kilobytes) as log2 histograms by the name of the task that submitted the I/O,
// counted as each request is issued to the device. Raw tracepoints reading the request with
// CO-RE; the submitter from block_io_start where the kernel has it (6.5+), else the task that
// inserts or issues the request.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/block.bpf.h>
#include <tpkit/hist.bpf.h>
#include "bitesize.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

TPKIT_REQUEST_MAP(requests);
TPKIT_SWAPPED_MAP(hists, BPF_MAP_TYPE_PERCPU_HASH, struct bitesize_key, struct tpkit_log2_hist);
TPKIT_ZERO_VALUE(empty_hist, struct tpkit_log2_hist);

TPKIT_REQUEST_SUBMISSION_PROGRAMS(requests);

SEC("raw_tp/block_rq_issue")
int rq_issue(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	__u64 address = (__u64)rq;
	struct tpkit_request_start *start;
	struct bitesize_key key = {};
	struct tpkit_log2_hist *hist;
	void *active;

	tpkit_request_step(&requests, rq, true);
	start = bpf_map_lookup_elem(&requests, &address);
	if (!start)
		return 0;
	__builtin_memcpy(key.comm, start->comm, sizeof(key.comm));
	active = tpkit_active_map(&hists);
	if (!active)
		return 0;
	hist = tpkit_lookup_or_zero(active, &key, &empty_hist);
	if (hist)
		tpkit_log2_hist_add(hist, tpkit_request_bytes(rq) / 1024);
	return 0;
}

/* Only to forget the request. */
SEC("raw_tp/block_rq_complete")
int rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct tpkit_request_start start;

	tpkit_request_completed(&requests, (struct request *)ctx->args[0], (__u32)ctx->args[2], &start);
	return 0;
}
