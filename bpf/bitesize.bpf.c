/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Block I/O sizes (kilobytes) as log2 histograms by the name of the task that submitted the I/O,
 * counted as each request is issued to the device. Raw tracepoints reading the request with
 * CO-RE.
 *
 * The submitter without following every request from its submission: a request is either
 * issued at once, in the submitting task (direct and plugged I/O on queues without an I/O
 * scheduler), or inserted into a queue first, which also happens in the submitting task, and
 * issued later, often by a kernel worker. So only inserted requests are remembered, until their
 * issue; every other one is the current task's. That costs one hash lookup per request, where
 * following all of them from block_io_start cost four programs and a hash entry per request. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/block.bpf.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/tools/bitesize.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

/* The task that inserted a request, whether the filters keep it and its name. Entries stay:
 * requests are the queues' preallocated ones (one per tag), so an address comes back and its
 * next insertion overwrites the entry; the number of keys is bounded by the requests there are.
 * A plain hash: an LRU one costs more per update. */
enum submitter_state { ISSUED, SELECTED, LEFT_OUT };

struct submitter {
	char comm[TPKIT_COMM_LEN];
	__u32 state; /* enum submitter_state: ISSUED once its issue took it (cheaper than a delete) */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TPKIT_TIMING_MAX_ENTRIES);
	__type(key, __u64);
	__type(value, struct submitter);
} inserted SEC(".maps");

/* Up to 10,240 names, at a block request's rate: one copy every CPU shares (atomic adds), whose
 * preallocation costs a tenth of a per-CPU one's at start-up. */
TPKIT_SWAPPED_HALF(hists, BPF_MAP_TYPE_HASH, struct bitesize_key, struct tpkit_log2_hist)
	hists_a SEC(".maps"), hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(hists) hists SEC(".maps");
TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_hist SEC(".maps");

SEC("raw_tp/block_rq_insert")
int rq_insert(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	struct submitter task = {};
	__u64 key = (__u64)rq;

	task.state = tpkit_request_selected(rq) && tpkit_current_selected() ? SELECTED : LEFT_OUT;
	if (task.state == SELECTED)
		bpf_get_current_comm(task.comm, sizeof(task.comm));
	bpf_map_update_elem(&inserted, &key, &task, BPF_ANY);
	return 0;
}

SEC("raw_tp/block_rq_issue")
int rq_issue(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	struct submitter *task;
	struct bitesize_key key = {};
	struct tpkit_log2_hist *hist;
	__u64 address = (__u64)rq;
	void *active;

	task = bpf_map_lookup_elem(&inserted, &address);
	if (task && task->state != ISSUED) {
		bool selected = task->state == SELECTED;

		__builtin_memcpy(key.comm, task->comm, sizeof(key.comm));
		task->state = ISSUED;
		if (!selected)
			return 0;
	} else {
		if (!tpkit_request_selected(rq) || !tpkit_current_selected())
			return 0;
		bpf_get_current_comm(key.comm, sizeof(key.comm));
	}
	active = TPKIT_ACTIVE_MAP(hists);
	if (!active)
		return 0;
	hist = tpkit_lookup_or_zero(active, &key, &empty_hist, &tpkit_missed);
	if (hist)
		tpkit_log2_hist_add_atomic(hist, tpkit_request_bytes(rq) / 1024);
	return 0;
}
