/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Event transport shared by every streaming BPF program: a BPF ring buffer by default, a perf
 * buffer when the kernel has no ring buffer or the user asks for it (user space decides before
 * load through tpkit_use_perf_buffer). Records that do not fit, in either, are counted in a
 * per-CPU drop counter where they happen: exact, unlike the perf buffer's own lost-sample
 * records, which the kernel sends only once a later sample fits.
 *
 * The tool defines the three maps, under the names user space looks up (transport.hpp), and
 * tpkit_emit() and the others below send through them:
 *
 *	struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
 *	struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
 *	struct tpkit_counter_map tpkit_drops SEC(".maps");
 *
 * Events of varying size (a path, argv strings) are built in a per-CPU scratch buffer, off the
 * 512-byte stack, and only their used prefix is sent:
 *
 *	TPKIT_SCRATCH(struct opensnoop_event) scratch SEC(".maps");
 *
 *	struct opensnoop_event *e = tpkit_scratch(&scratch);
 *	long len;
 *
 *	if (!e)
 *		return 0;
 *	tpkit_fill_task_header(&e->task);
 *	len = bpf_probe_read_user_str(e->path, sizeof(e->path), filename);
 *	e->path_size = len > 0 ? len : 0;
 *	tpkit_emit_prefix(ctx, e, offsetof(struct opensnoop_event, path) + e->path_size);
 *
 * The buffer still holds the previous event on this CPU: set every field before the tail. The
 * event itself says how much of its tail is valid (path_size): user space must not infer it
 * from the record's size. The ring buffer delivers exactly the prefix (run_stream zero-fills the
 * rest of its Event), but the perf buffer pads each record to a size of 4 modulo 8 with bytes
 * nobody wrote. */
#ifndef TPKIT_EMIT_BPF_H
#define TPKIT_EMIT_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/counter.bpf.h>
#include <tpkit/limits.h>

const volatile bool tpkit_use_perf_buffer = false;

struct tpkit_ringbuf_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TPKIT_RINGBUF_BYTES);
};

struct tpkit_perfbuf_map {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
};

/* A one-entry per-CPU array holding an event of TYPE: room for a large event. */
#define TPKIT_SCRATCH(event_type)                            \
	struct {                                             \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);     \
		__uint(max_entries, 1);                      \
		__type(key, __u32);                          \
		__type(value, event_type);                   \
	}

/* This CPU's buffer of a TPKIT_SCRATCH map (NULL only if the map is broken). */
static __always_inline void *tpkit_scratch(void *scratch)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(scratch, &zero);
}

/* min(n, max) in a register the verifier knows is at most max: what a size or an offset into an
 * event's tail must be before a helper takes it. 64-bit, and the barrier keeps clang from
 * handing on a copy taken before the check. */
static __always_inline __u64 tpkit_bound(__u64 n, __u64 max)
{
	if (n > max)
		n = max;
	asm volatile("" : "+r"(n));
	return n;
}

/* The functions below take the transport's maps; the macros of the same names without _to
 * pass the tool's, by their names. */
static __always_inline void tpkit_emit_to(void *ringbuf, void *perfbuf, void *drops, void *ctx,
					  void *event, __u64 size)
{
	long err;

	if (tpkit_use_perf_buffer)
		err = bpf_perf_event_output(ctx, perfbuf, BPF_F_CURRENT_CPU, event, size);
	else
		/* Never a wake-up: the reader consumes on a short timer (EventReader::poll). A wake-up
		 * per event costs the traced task several times the event itself, and asking how much
		 * data waits reads a cache line the reader keeps writing. */
		err = bpf_ringbuf_output(ringbuf, event, size, BPF_RB_NO_WAKEUP);
	if (err)
		tpkit_count(drops);
}

#define tpkit_emit(ctx, event, size) \
	tpkit_emit_to(&tpkit_ringbuf, &tpkit_perfbuf, &tpkit_drops, (ctx), (event), (size))

/* An event of a constant size written where it goes, with no copy in between:
 *
 *	struct forksnoop_event stack_event, *e = tpkit_event_begin(&stack_event, sizeof(*e));
 *
 *	if (!e)
 *		return 0;
 *	barrier_var(e);
 *	... set every field ...
 *	tpkit_event_send(ctx, e, sizeof(*e));
 *
 * With the ring buffer, e is a reservation in it (NULL, counted as a drop, when the ring is
 * full), which holds whatever the ring held before: set every byte. With the perf buffer, e is
 * the caller's stack copy, sent by tpkit_emit(). barrier_var() keeps clang from computing the
 * fields' addresses before the NULL check, which the verifier refuses. The verifier follows only the transport chosen
 * at load (rodata), so a reservation is always submitted. */
static __always_inline void *tpkit_event_begin_to(void *ringbuf, void *drops, void *stack_event,
						  __u64 size)
{
	void *event;

	if (tpkit_use_perf_buffer)
		return stack_event;
	event = bpf_ringbuf_reserve(ringbuf, size, 0);
	if (!event)
		tpkit_count(drops);
	return event;
}

#define tpkit_event_begin(stack_event, size) \
	tpkit_event_begin_to(&tpkit_ringbuf, &tpkit_drops, (stack_event), (size))

static __always_inline void tpkit_event_send_to(void *ringbuf, void *perfbuf, void *drops,
						void *ctx, void *event, __u64 size)
{
	if (tpkit_use_perf_buffer)
		tpkit_emit_to(ringbuf, perfbuf, drops, ctx, event, size);
	else
		bpf_ringbuf_submit(event, BPF_RB_NO_WAKEUP);
}

#define tpkit_event_send(ctx, event, size) \
	tpkit_event_send_to(&tpkit_ringbuf, &tpkit_perfbuf, &tpkit_drops, (ctx), (event), (size))

/* Sends the first `used` bytes of *event, at most sizeof(*event): event must be a pointer to the
 * event's type (a scratch buffer or a stack struct), not void *. */
#define tpkit_emit_prefix(ctx, event, used) \
	tpkit_emit((ctx), (event), tpkit_bound((used), sizeof(*(event))))

#endif
