/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every block I/O completion with the task that submitted it, its disk, operation, sector and
 * size, and its times queued and at the device. Raw tracepoints reading the request with CO-RE;
 * the submitter from block_io_start where the kernel has it (6.5+), else from the task that
 * inserts or issues the request. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/block.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/tools/biosnoop.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");
/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

/* Completions sooner than this after their issue are left out. */
const volatile __u64 min_ns = 0;

struct tpkit_request_map requests SEC(".maps");

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
	struct biosnoop_event event = {};

	if (!tpkit_request_completed(&requests, rq, nr_bytes, &start))
		return 0;
	event.timestamp_ns = bpf_ktime_get_ns();
	event.latency_ns = event.timestamp_ns - start.issued_ns;
	if (event.latency_ns < min_ns)
		return 0;
	event.queued_ns = start.queued_ns ? start.issued_ns - start.queued_ns : BIOSNOOP_NOT_QUEUED;
	event.sector = tpkit_request_sector(rq);
	event.pid = start.pid;
	event.tid = start.tid;
	event.dev = tpkit_request_dev(rq);
	event.bytes = nr_bytes;
	event.op = tpkit_request_op(rq);
	event.flags = tpkit_request_flags(rq);
	__builtin_memcpy(event.comm, start.comm, sizeof(event.comm));
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
