/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tpsnoop's engine: sends each event of tracepoints chosen at run time, raw, with who and when;
 * user space decodes it from the format. One instance per classic event, or per group of
 * syscall events on raw_syscalls; they share the transport. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/armed.bpf.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/engine.h>
#include <tpkit/filter.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/user_str.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile struct tpkit_filter_prog tpkit_filter = {};
const volatile struct tpkit_engine_config tpkit_config = {};

#include <tpkit/record.bpf.h>
#include <tpkit/syscall.bpf.h>

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");
/* The engine's maps (filter.bpf.h, record.bpf.h, syscall.bpf.h). */
struct tpkit_filter_user_str_map tpkit_filter_user_str SEC(".maps");
struct tpkit_record_scratch_map tpkit_record_scratch SEC(".maps");
struct tpkit_syscall_events_map tpkit_syscall_events SEC(".maps");

static __always_inline void fill_header(struct tpsnoop_header *h)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->timestamp_ns = bpf_ktime_get_ns();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(h->comm, sizeof(h->comm));
	h->user_strings = 0;
	h->reserved = 0;
	h->jiffies = 0;
	/* What the kernel's text of the event reads as jiffies (writeback's age=). */
	if (tpkit_config.jiffies_address)
		bpf_probe_read_kernel(&h->jiffies, sizeof(h->jiffies), (const void *)tpkit_config.jiffies_address);
}

/* The common_* header of a copy, as the kernel will write it (see record.bpf.h). */
static __always_inline void fill_common(struct tpkit_common_header *common, __u32 event_id, __u32 tid)
{
	common->type = event_id;
	common->flags = 0;
	common->preempt_count = 0;
	common->pid = tid;
}

/* A record without dynamic fields, for the ring buffer: its size is a constant to the verifier
 * (rodata), so it is read straight into its reservation, with no copy in between. */
static __always_inline void snoop_fixed_to_ring(void *ctx)
{
	struct tpkit_record_copy *r;
	__u64 fixed = tpkit_config.fixed_size;

	if (fixed < sizeof(struct tpkit_common_header) || fixed > TPKIT_SNOOP_RECORD_MAX)
		return;
	r = bpf_ringbuf_reserve(&tpkit_ringbuf, sizeof(r->header) + fixed, 0);
	if (!r) {
		tpkit_count(&tpkit_drops);
		return;
	}
	bpf_probe_read_kernel(r->record, fixed, ctx);
	fill_header(&r->header);
	r->header.record_size = fixed;
	fill_common((struct tpkit_common_header *)r->record, tpkit_config.event_id, r->header.tid);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* A syscall event with the user strings its arguments point to (tpsnoop_header.user_strings). */
struct syscall_strings_copy {
	struct tpsnoop_header header;
	struct tpkit_syscall_record record;
	struct tpkit_user_str strings[6];
};

TPKIT_SCRATCH(struct syscall_strings_copy) syscall_strings_scratch SEC(".maps");

/* Sends the syscall event whose header and record are in c, with the string each bit i of mask
 * says args[i] points to. */
static __always_inline void snoop_with_strings(void *ctx, struct syscall_strings_copy *c, __u32 mask)
{
	__u32 n = 0;

	c->header.user_strings = mask;
	for (int i = 0; i < 6; i++) {
		struct tpkit_user_str *s;
		bool cut;

		if (!(mask & (1u << i)))
			continue;
		if (n >= 6)
			break;
		s = &c->strings[n];
		s->len = tpkit_read_user_str(s->text, sizeof(s->text), (const char *)c->record.args[i], &cut);
		s->flags = cut ? TPKIT_USER_STR_CUT : 0;
		n++;
	}
	tpkit_emit_prefix(ctx, c, __builtin_offsetof(struct syscall_strings_copy, strings) +
				       (__u64)n * sizeof(struct tpkit_user_str));
}

/* A classic syscalls:sys_enter_* event whose strings tpsnoop shows. */
static __always_inline void snoop_classic_strings(void *ctx)
{
	struct syscall_strings_copy *c = tpkit_scratch(&syscall_strings_scratch);
	__u64 fixed = tpkit_bound(tpkit_config.fixed_size, sizeof(c->record));

	if (!c)
		return;
	__builtin_memset(&c->record, 0, sizeof(c->record));
	bpf_probe_read_kernel(&c->record, fixed, ctx);
	fill_header(&c->header);
	c->header.record_size = fixed;
	fill_common((struct tpkit_common_header *)&c->record.common, tpkit_config.event_id, c->header.tid);
	snoop_with_strings(ctx, c, tpkit_config.user_strings);
}

/* A record with the strings its `char *` fields point to in kernel memory, after it from
 * tpkit_strings_offset(record_size) (see tpsnoop_header.user_strings). */
struct kernel_strings_copy {
	struct tpkit_record_copy copy;
	struct tpkit_user_str strings[TPKIT_SNOOP_MAX_KERNEL_STRINGS];
};

TPKIT_SCRATCH(struct kernel_strings_copy) kernel_strings_scratch SEC(".maps");

static __always_inline void snoop_kernel_strings(void *ctx)
{
	struct kernel_strings_copy *c = tpkit_scratch(&kernel_strings_scratch);
	__u64 at;
	__u32 n = 0;

	if (!c)
		return;
	tpkit_copy_record_into(ctx, &c->copy);
	fill_header(&c->copy.header);
	at = tpkit_strings_offset(c->copy.header.record_size);
	asm volatile("" : "+r"(at)); /* bound this very register for the verifier */
	if (at > TPKIT_SNOOP_RECORD_MAX)
		return;
	for (int i = 0; i < TPKIT_SNOOP_MAX_KERNEL_STRINGS; i++) {
		struct tpkit_user_str *s;
		const char *src = 0;
		__u64 field;
		bool cut;

		if (i >= tpkit_config.kernel_strings)
			break;
		field = tpkit_config.kernel_string_offsets[i];
		if (field > TPKIT_SNOOP_RECORD_MAX - sizeof(src))
			break;
		src = *(const char **)(c->copy.record + field);
		s = (struct tpkit_user_str *)(c->copy.record + at + (__u64)i * sizeof(*s));
		s->len = tpkit_read_kernel_str(s->text, sizeof(s->text), src, &cut);
		s->flags = cut ? TPKIT_USER_STR_CUT : 0;
		n++;
	}
	c->copy.header.user_strings = (1u << n) - 1;
	tpkit_emit_prefix(ctx, c, sizeof(c->copy.header) + at + (__u64)n * sizeof(struct tpkit_user_str));
}

SEC("tracepoint")
int snoop_event(void *ctx)
{
	struct tpkit_record_copy *r;
	__u64 size;

	if (!tpkit_engine_armed || !tpkit_current_selected())
		return 0;
	if (tpkit_filter.len && !tpkit_filter_match(ctx, &tpkit_filter, &tpkit_filter_user_str))
		return 0;
	if (tpkit_config.user_strings) {
		snoop_classic_strings(ctx);
		return 0;
	}
	if (tpkit_config.kernel_strings) {
		snoop_kernel_strings(ctx);
		return 0;
	}
	if (!tpkit_use_perf_buffer && !tpkit_config.dynamic_count) {
		snoop_fixed_to_ring(ctx);
		return 0;
	}
	r = tpkit_copy_record(ctx, &tpkit_record_scratch);
	if (!r)
		return 0;
	fill_header(&r->header);
	size = r->header.record_size;
	asm volatile("" : "+r"(size)); /* bound this very register for the verifier */
	if (size > TPKIT_SNOOP_RECORD_MAX)
		size = TPKIT_SNOOP_RECORD_MAX;
	tpkit_emit(ctx, r, sizeof(r->header) + size);
	return 0;
}

/* A syscall event's record is small and fixed: built on the stack, header and all. */
struct syscall_copy {
	struct tpsnoop_header header;
	struct tpkit_syscall_record record;
};

SEC("raw_tracepoint")
int snoop_syscall(__u64 *ctx)
{
	struct syscall_copy c = {};
	const struct tpkit_syscall_event *event;
	struct tpkit_common_header *common = (struct tpkit_common_header *)&c.record.common;

	if (!tpkit_engine_armed)
		return 0;
	event = tpkit_syscall_event(ctx, &c.record, &tpkit_syscall_events);
	if (!event || !tpkit_current_selected())
		return 0;
	if (tpkit_filter.len &&
	    !tpkit_filter_match(&c.record, &tpkit_filter, &tpkit_filter_user_str))
		return 0;
	if (event->user_strings) {
		struct syscall_strings_copy *s = tpkit_scratch(&syscall_strings_scratch);

		if (!s)
			return 0;
		s->record = c.record;
		fill_header(&s->header);
		fill_common((struct tpkit_common_header *)&s->record.common, event->event_id, s->header.tid);
		s->header.record_size = tpkit_bound(event->record_size, sizeof(s->record));
		snoop_with_strings(ctx, s, event->user_strings);
		return 0;
	}
	fill_header(&c.header);
	fill_common(common, event->event_id, c.header.tid);
	c.header.record_size = tpkit_bound(event->record_size, sizeof(c.record));
	tpkit_emit(ctx, &c, sizeof(c.header) + c.header.record_size);
	return 0;
}
