/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Block requests (struct request *), read with CO-RE: what the block tools share. Their events
 * are raw tracepoints whose first argument is the request: block_rq_insert (queued in the I/O
 * scheduler or a software queue: not every request is), block_rq_issue (sent to the driver),
 * block_rq_complete (request, error, bytes done: a request may complete in parts), and since 6.5
 * block_io_start, which runs in the task that submitted the I/O. Include vmlinux.h first.
 *
 * -d DISK: tpkit_target_disk (a whole disk) or tpkit_target_partition, as the kernel's dev_t,
 * set by user space before load (block.hpp). */
#ifndef TPKIT_BLOCK_BPF_H
#define TPKIT_BLOCK_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <tpkit/block.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/limits.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>

const volatile __u32 tpkit_target_disk = 0;
const volatile __u32 tpkit_target_partition = 0;

/* The dev_t of the request's disk (the whole disk, also for I/O to a partition); 0 without one. */
static __always_inline __u32 tpkit_request_dev(struct request *rq)
{
	struct gendisk *disk = tpkit_request_disk(rq);

	if (!disk)
		return 0;
	return (__u32)BPF_CORE_READ(disk, major) << TPKIT_MINOR_BITS |
	       (__u32)BPF_CORE_READ(disk, first_minor);
}

/* The dev_t of the partition (or the whole disk) a request's I/O is for: its bio's device.
 * rq->part says the same but is set only after block_io_start runs (blk_account_io_start); a
 * request without a bio (a flush) has only that. */
static __always_inline __u32 tpkit_request_partition(struct request *rq)
{
	struct bio *bio = BPF_CORE_READ(rq, bio);

	if (bio)
		return BPF_CORE_READ(bio, bi_bdev, bd_dev);
	return BPF_CORE_READ(rq, part, bd_dev);
}

/* Whether the request goes to the disk or partition of -d (every request without it). */
static __always_inline bool tpkit_request_selected(struct request *rq)
{
	if (tpkit_target_disk && tpkit_request_dev(rq) != tpkit_target_disk)
		return false;
	if (tpkit_target_partition && tpkit_request_partition(rq) != tpkit_target_partition)
		return false;
	return true;
}

/* The request's operation (TPKIT_REQ_OP_*: the kernel's REQ_OP_*). */
static __always_inline __u32 tpkit_request_op(struct request *rq)
{
	return (__u32)BPF_CORE_READ(rq, cmd_flags) & 0xff;
}

/* ours when the kernel's __REQ_<name> bit is set in cmd_flags, found by name in this kernel's
 * enum req_flag_bits (0 where it has no such flag). */
#define TPKIT_REQ_FLAG(cmd_flags, name, ours)                                              \
	(bpf_core_enum_value_exists(enum req_flag_bits, name) &&                           \
			 ((cmd_flags) >> bpf_core_enum_value(enum req_flag_bits, name) & 1) \
		 ? (ours)                                                                  \
		 : 0)

/* The request's flags as TPKIT_REQ_* bits. */
static __always_inline __u32 tpkit_request_flags(struct request *rq)
{
	__u64 f = (__u64)BPF_CORE_READ(rq, cmd_flags);

	return TPKIT_REQ_FLAG(f, __REQ_SYNC, TPKIT_REQ_SYNC) |
	       TPKIT_REQ_FLAG(f, __REQ_META, TPKIT_REQ_META) |
	       TPKIT_REQ_FLAG(f, __REQ_PRIO, TPKIT_REQ_PRIO) |
	       TPKIT_REQ_FLAG(f, __REQ_NOMERGE, TPKIT_REQ_NOMERGE) |
	       TPKIT_REQ_FLAG(f, __REQ_IDLE, TPKIT_REQ_IDLE) |
	       TPKIT_REQ_FLAG(f, __REQ_INTEGRITY, TPKIT_REQ_INTEGRITY) |
	       TPKIT_REQ_FLAG(f, __REQ_FUA, TPKIT_REQ_FUA) |
	       TPKIT_REQ_FLAG(f, __REQ_PREFLUSH, TPKIT_REQ_PREFLUSH) |
	       TPKIT_REQ_FLAG(f, __REQ_RAHEAD, TPKIT_REQ_RAHEAD) |
	       TPKIT_REQ_FLAG(f, __REQ_BACKGROUND, TPKIT_REQ_BACKGROUND) |
	       TPKIT_REQ_FLAG(f, __REQ_NOWAIT, TPKIT_REQ_NOWAIT);
}

/* Whether block_rq_complete(rq, error, nr_bytes) ends the request: it completes what is left of
 * it (its length then is what was not yet completed). */
static __always_inline bool tpkit_request_done(struct request *rq, __u32 nr_bytes)
{
	return nr_bytes >= BPF_CORE_READ(rq, __data_len);
}

/* The request's first sector (512-byte units) and length in bytes, as they are when read: a
 * partial completion advances both. */
static __always_inline __u64 tpkit_request_sector(struct request *rq)
{
	return BPF_CORE_READ(rq, __sector);
}

static __always_inline __u32 tpkit_request_bytes(struct request *rq)
{
	return BPF_CORE_READ(rq, __data_len);
}

/* Whether the request's queue has an I/O scheduler: then block_rq_insert comes before the
 * issue; without one, a request is usually issued directly, never inserted. */
static __always_inline bool tpkit_request_scheduled(struct request *rq)
{
	return BPF_CORE_READ(rq, q, elevator) != NULL;
}

/* What a tool keeps of a request in flight (a struct tpkit_request_map, keyed by the request's
 * address): the task that submitted it, and when it was queued and issued (0: not seen). */
struct tpkit_request_start {
	__u64 queued_ns;
	__u64 issued_ns;
	__u32 pid;
	__u32 tid;
	char comm[TPKIT_COMM_LEN];
};

struct tpkit_request_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TPKIT_TIMING_MAX_ENTRIES);
	__type(key, __u64);
	__type(value, struct tpkit_request_start);
};

/* How a tool follows requests from their submission to their completion, in
 *
 *	struct tpkit_request_map requests SEC(".maps");
 *
 * its program on block_io_start (loaded only where the kernel has that event:
 * tpkit::follow_requests_from_submission() in user space) calls
 * tpkit_request_submitted(&requests, rq, &tpkit_missed), those on block_rq_insert and
 * block_rq_issue tpkit_request_step(&requests, rq, false or true, &tpkit_missed), and the one on
 * block_rq_complete tpkit_request_completed(). */

/* A new request, submitted by the current task: block_io_start (6.5+) runs in that task. Requests
 * of other disks, or whose task the filters leave out, are forgotten. A full map is counted in
 * missed. */
static __always_inline void tpkit_request_submitted(void *map, struct request *rq, void *missed)
{
	struct tpkit_request_start start = {};
	__u64 key = (__u64)rq, id;

	if (!tpkit_request_selected(rq) || !tpkit_current_selected()) {
		bpf_map_delete_elem(map, &key);
		return;
	}
	id = bpf_get_current_pid_tgid();
	start.pid = id >> 32;
	start.tid = (__u32)id;
	bpf_get_current_comm(start.comm, sizeof(start.comm));
	if (bpf_map_update_elem(map, &key, &start, BPF_ANY))
		tpkit_count(missed);
}

/* block_rq_insert (issued: false) or block_rq_issue (true) of a request. A record already issued,
 * or at an insertion already queued, is of an earlier request at the same address (one that was
 * merged away, never completed), and where the kernel has no block_io_start every request starts
 * here: then the current task is taken as its submitter, which it is for I/O inserted or issued
 * by the task that submits it, not for I/O a kernel worker dispatches later. */
static __always_inline void tpkit_request_step(void *map, struct request *rq, bool issued,
					       void *missed)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct tpkit_request_start *start = bpf_map_lookup_elem(map, &key);

	if (!start || start->issued_ns || (!issued && start->queued_ns)) {
		tpkit_request_submitted(map, rq, missed);
		start = bpf_map_lookup_elem(map, &key);
		if (!start)
			return;
	}
	if (issued)
		start->issued_ns = now;
	else
		start->queued_ns = now;
}

/* The record of a request at block_rq_complete when it was issued while the program ran, copied
 * into *out; forgotten when this completion ends the request (tpkit_request_done). */
static __always_inline bool tpkit_request_completed(void *map, struct request *rq, __u32 nr_bytes,
						    struct tpkit_request_start *out)
{
	__u64 key = (__u64)rq;
	struct tpkit_request_start *start = bpf_map_lookup_elem(map, &key);

	if (!start)
		return false;
	*out = *start;
	if (tpkit_request_done(rq, nr_bytes))
		bpf_map_delete_elem(map, &key);
	return out->issued_ns != 0;
}

#endif
