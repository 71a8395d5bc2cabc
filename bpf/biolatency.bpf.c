/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Block I/O latency as log2 histograms: from a request's issue to the driver (or, with -Q, from
 * its insertion into a queue) to its completion, per request (keyed by its address). Raw
 * tracepoints reading the request with CO-RE. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/block.bpf.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include <tpkit/tools/biolatency.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

const volatile bool queued = false;
const volatile bool per_disk = false;
const volatile bool per_flags = false;
const volatile bool milliseconds = false;

/* When each request in flight started (issued, or with -Q queued). */
TPKIT_TIMING_MAP(__u64) starts SEC(".maps");
TPKIT_SWAPPED_HALF(hists, BPF_MAP_TYPE_PERCPU_HASH, struct biolatency_key, struct tpkit_log2_hist)
	hists_a SEC(".maps"), hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(hists) hists SEC(".maps");
TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_hist SEC(".maps");

/* -p, -t, -u, --cgroup, --comm: the task current when the request starts. */
static __always_inline void request_started(struct request *rq)
{
	__u64 key = (__u64)rq;

	if (tpkit_request_selected(rq) && tpkit_current_selected())
		tpkit_timing_start(&starts, &key, &tpkit_missed);
}

/* Loaded with -Q only. */
SEC("raw_tp/block_rq_insert")
int rq_insert(struct bpf_raw_tracepoint_args *ctx)
{
	request_started((struct request *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/block_rq_issue")
int rq_issue(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];

	/* With -Q and an I/O scheduler, the request's time began at its insertion. Without one a
	 * request is inserted only when it cannot be issued at once (bcc's biolatency alike). */
	if (queued && tpkit_request_scheduled(rq))
		return 0;
	request_started(rq);
	return 0;
}

SEC("raw_tp/block_rq_complete")
int rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	struct biolatency_key key = {};
	__u64 address = (__u64)rq, ns;
	struct tpkit_log2_hist *hist;
	void *active;

	/* A request completed in parts counts once, when its last part completes. */
	if (!tpkit_request_done(rq, (__u32)ctx->args[2]))
		return 0;
	if (!tpkit_timing_elapsed(&starts, &address, &ns))
		return 0;
	if (per_disk)
		key.dev = tpkit_request_dev(rq);
	if (per_flags) {
		key.op = tpkit_request_op(rq);
		key.flags = tpkit_request_flags(rq);
	}
	active = TPKIT_ACTIVE_MAP(hists);
	if (!active)
		return 0;
	hist = tpkit_lookup_or_zero(active, &key, &empty_hist, &tpkit_missed);
	if (hist)
		tpkit_log2_hist_add(hist, milliseconds ? ns / 1000000 : ns / 1000);
	return 0;
}
