/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A copy of the tracepoint record, whole (fixed part and dynamic fields) and with its common_*
 * header rebuilt, in a per-CPU buffer: what tpsnoop sends. When BPF runs, the kernel has not
 * filled in the header yet (the first 8 bytes hold a pt_regs pointer): the copy gets common_type
 * and common_pid as the kernel will write them, and zero for common_flags and
 * common_preempt_count, which BPF cannot know (tpsnoop refuses to print them). The engine's
 * rodata must be named tpkit_config (struct tpkit_engine_config). The buffer is the tool's:
 *
 *	struct tpkit_record_scratch_map tpkit_record_scratch SEC(".maps");
 */
#ifndef TPKIT_RECORD_BPF_H
#define TPKIT_RECORD_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/engine.h>

struct tpkit_record_copy {
	struct tpsnoop_header header;
	__u8 record[TPKIT_SNOOP_RECORD_MAX];
};

/* Too large for the stack. */
struct tpkit_record_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tpkit_record_copy);
};

/* Header layout of every kernel: u16 type, u8 flags, u8 preempt_count, s32 pid. */
struct tpkit_common_header {
	__u16 type;
	__u8 flags;
	__u8 preempt_count;
	__s32 pid;
};

/* Copies the current record into r. header.record_size is set; the rest of the header is left
 * to the caller. */
static __always_inline void tpkit_copy_record_into(void *ctx, struct tpkit_record_copy *r)
{
	__u64 fixed = tpkit_config.fixed_size, end;
	struct tpkit_common_header *common;

	if (fixed > TPKIT_SNOOP_RECORD_MAX)
		fixed = TPKIT_SNOOP_RECORD_MAX;
	bpf_probe_read_kernel(r->record, fixed, ctx);

	/* The record ends after its last dynamic field's bytes. */
	end = fixed;
	for (int i = 0; i < TPKIT_SNOOP_MAX_DYNAMIC; i++) {
		__u64 at, loc, start;

		if (i >= tpkit_config.dynamic_count)
			break;
		at = tpkit_config.dynamic_offsets[i] & ~TPKIT_SNOOP_REL_LOC;
		if (at > TPKIT_SNOOP_RECORD_MAX - sizeof(__u32))
			break;
		loc = *(__u32 *)(r->record + at);
		start = loc & 0xffff;
		if (tpkit_config.dynamic_offsets[i] & TPKIT_SNOOP_REL_LOC)
			start += at + sizeof(__u32);
		if (start + (loc >> 16) > end)
			end = start + (loc >> 16);
	}
	if (end > fixed) {
		__u64 tail = end - fixed;

		/* Keep clang from clamping a copy: the verifier must see this register bounded. */
		asm volatile("" : "+r"(tail));
		if (tail > TPKIT_SNOOP_RECORD_MAX - fixed)
			tail = TPKIT_SNOOP_RECORD_MAX - fixed;
		bpf_probe_read_kernel(r->record + fixed, tail, ctx + fixed);
		end = fixed + tail;
	}
	r->header.record_size = end;

	if (fixed >= sizeof(*common)) {
		common = (struct tpkit_common_header *)r->record;
		common->type = tpkit_config.event_id;
		common->flags = 0;
		common->preempt_count = 0;
		common->pid = (__u32)bpf_get_current_pid_tgid();
	}
}

/* Copies the current record into this CPU's buffer in `scratch` (a struct
 * tpkit_record_scratch_map); NULL if it cannot. */
static __always_inline struct tpkit_record_copy *tpkit_copy_record(void *ctx, void *scratch)
{
	struct tpkit_record_copy *r;
	__u32 zero = 0;

	r = bpf_map_lookup_elem(scratch, &zero);
	if (r)
		tpkit_copy_record_into(ctx, r);
	return r;
}

#endif
