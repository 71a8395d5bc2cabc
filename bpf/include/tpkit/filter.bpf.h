/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The event-filter evaluator: runs a program compiled by tpkit::compile_filter (see
 * include/tpkit/filter.h) over a classic tracepoint's record.
 *
 * Usage, in an engine's .bpf.c (user space fills the variable between open and load):
 *
 *	const volatile struct tpkit_filter_prog tpkit_filter = {};
 *	struct tpkit_filter_user_str_map tpkit_filter_user_str SEC(".maps");
 *
 *	SEC("tracepoint")
 *	int handle(void *ctx)
 *	{
 *		if (!tpkit_filter_match(ctx, &tpkit_filter, &tpkit_filter_user_str))
 *			return 0;
 *		...
 *	}
 *
 * The program must live in rodata: the verifier then reads each instruction as constants and
 * checks only the code that instruction uses. From a writable map it would check every operation
 * for every instruction and give up. Fields are read with bpf_probe_read_kernel(ctx + offset):
 * the verifier refuses loads from ctx at an offset it cannot prove. Little-endian only.
 *
 * The record's common_* header is never read: the kernel fills it in after BPF programs run (its
 * first 8 bytes hold a pt_regs pointer until then). common_pid is the current thread's ID and
 * common_type the program's event_id, as the kernel writes them; the compiler refuses the rest. */
#ifndef TPKIT_FILTER_BPF_H
#define TPKIT_FILTER_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/engine.h>
#include <tpkit/filter.h>

/* The user string a predicate compares (TPKIT_FILTER_SRC_STR_USER): too large for the stack
 * beside the evaluator's own buffers, it is read into a per-CPU map, the `user_str` the
 * functions below take. */
struct tpkit_filter_user_str {
	char text[TPKIT_USER_STR_MAX];
};
struct tpkit_filter_user_str_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tpkit_filter_user_str);
};

/* min(n, max) in a register the verifier knows is bounded. 64-bit, because a 32-bit value is
 * compared through a zero-extended copy whose bounds never reach the original; the barrier keeps
 * clang from passing the helper a copy taken before the check. */
static __always_inline __u64 tpkit_filter_clamp(__u64 n, __u64 max)
{
	if (n > max)
		n = max;
	asm volatile("" : "+r"(n));
	return n;
}

static __always_inline bool tpkit_filter_is_number(__u8 source)
{
	return source == TPKIT_FILTER_SRC_UNSIGNED || source == TPKIT_FILTER_SRC_SIGNED ||
	       source == TPKIT_FILTER_SRC_CPU || source == TPKIT_FILTER_SRC_TID ||
	       source == TPKIT_FILTER_SRC_EVENT_ID;
}

/* The field as an integer, extended to 64 bits by its signedness. */
static __always_inline __u64 tpkit_filter_number(void *ctx,
						 const volatile struct tpkit_filter_prog *prog,
						 const volatile struct tpkit_filter_insn *insn)
{
	__u64 size = insn->size;
	__u64 value = 0;

	if (insn->source == TPKIT_FILTER_SRC_CPU)
		return (__u64)(__s64)(__s32)bpf_get_smp_processor_id();
	if (insn->source == TPKIT_FILTER_SRC_TID)
		return (__u64)(__s64)(__s32)bpf_get_current_pid_tgid();
	if (insn->source == TPKIT_FILTER_SRC_EVENT_ID)
		return (__u16)prog->event_id;
	size = tpkit_filter_clamp(size, 8);
	bpf_probe_read_kernel(&value, size, ctx + insn->offset);
	if (insn->source == TPKIT_FILTER_SRC_SIGNED && size < 8) {
		__u32 shift = 64 - size * 8;

		value = (__u64)((__s64)(value << shift) >> shift);
	}
	return value;
}

static __always_inline bool tpkit_filter_compare(const volatile struct tpkit_filter_insn *insn,
						 __u64 field)
{
	__u64 value = insn->value;
	bool is_signed = insn->source == TPKIT_FILTER_SRC_SIGNED || insn->source == TPKIT_FILTER_SRC_CPU ||
			 insn->source == TPKIT_FILTER_SRC_TID;

	switch (insn->op) {
	case TPKIT_FILTER_OP_EQ:
		return field == value;
	case TPKIT_FILTER_OP_LT:
		return is_signed ? (__s64)field < (__s64)value : field < value;
	case TPKIT_FILTER_OP_LE:
		return is_signed ? (__s64)field <= (__s64)value : field <= value;
	case TPKIT_FILTER_OP_GT:
		return is_signed ? (__s64)field > (__s64)value : field > value;
	case TPKIT_FILTER_OP_GE:
		return is_signed ? (__s64)field >= (__s64)value : field >= value;
	case TPKIT_FILTER_OP_BAND:
		return (field & value) != 0;
	}
	return false;
}

/* strncmp(str, pattern + from, n) == 0 over the first n bytes of str, n <= PATTERN_MAX. */
static __always_inline bool tpkit_filter_prefix_equal(const void *str, __u64 n,
						      const volatile struct tpkit_filter_insn *insn,
						      bool stop_at_nul)
{
	char bytes[TPKIT_FILTER_PATTERN_MAX] = {};

	n = tpkit_filter_clamp(n, TPKIT_FILTER_PATTERN_MAX);
	bpf_probe_read_kernel(bytes, n, str);
	for (int i = 0; i < TPKIT_FILTER_PATTERN_MAX; i++) {
		if (i >= n)
			break;
		if (bytes[i] != insn->pattern[i])
			return false;
		if (stop_at_nul && bytes[i] == '\0')
			break;
	}
	return true;
}

/* Bytes of a string the automaton reads per step of its walk. */
#define TPKIT_FILTER_CHUNK 64

/* An automaton's walk over a string, shared with each step (a bpf_loop callback).
 *
 * state sits in the second half of an 8-byte stack slot on purpose: the verifier keeps no value
 * for a 4-byte store there, so every step starts from a state it knows nothing of. Otherwise it
 * tells steps apart by what it knows of the state (bits set, bounds) and checks the callback
 * again for each; some patterns then exceed its 1M-instruction budget. */
struct tpkit_filter_walk {
	const volatile __u32 *accept; /* the automaton's accept[256] */
	const char *str;
	__u64 n;       /* bytes to look at */
	__u32 star;
	__u32 state;
	__u32 to_nul;  /* stop at the first NUL */
	__u32 reserved;
};
_Static_assert(__builtin_offsetof(struct tpkit_filter_walk, state) % 8 == 4,
	       "the walk's state must not start a stack slot");

/* Step `index` of a walk: runs the automaton over the string's next TPKIT_FILTER_CHUNK bytes.
 * Returns 1 (stop) at the string's end, its NUL when to_nul, or once no state is left. */
static long tpkit_filter_walk_chunk(__u32 index, void *data)
{
	struct tpkit_filter_walk *w = data;
	const volatile __u32 *accept = w->accept;
	char bytes[TPKIT_FILTER_CHUNK] = {};
	__u64 from = (__u64)index * TPKIT_FILTER_CHUNK, size;
	__u32 state = w->state, star = w->star, to_nul = w->to_nul;

	if (from >= w->n)
		return 1;
	size = tpkit_filter_clamp(w->n - from, TPKIT_FILTER_CHUNK);
	bpf_probe_read_kernel(bytes, size, w->str + from);
	for (int i = 0; i < TPKIT_FILTER_CHUNK; i++) {
		__u8 c;

		if (i >= size)
			break;
		c = bytes[i];
		if (to_nul && c == 0) {
			w->state = state;
			return 1;
		}
		state = (state & star) | ((state & accept[c]) << 1);
		state |= (state & star) << 1;
	}
	w->state = state;
	return state ? 0 : 1;
}

/* The automaton over the first n bytes of str (n <= TPKIT_FILTER_STRING_MAX, every byte a record
 * can hold). bpf_loop walks it: the verifier checks the step once or twice per call instead of
 * following a bounded loop through every step, which for 8 automata over 8 KiB would exceed
 * its budget. */
static __always_inline bool tpkit_filter_automaton(const void *str, __u64 n, bool to_nul,
						   const volatile struct tpkit_filter_prog *prog,
						   const volatile struct tpkit_filter_insn *insn)
{
	const volatile struct tpkit_filter_automaton *a;
	struct tpkit_filter_walk w = {};

	if (insn->automaton >= TPKIT_FILTER_MAX_AUTOMATA)
		return false;
	a = &prog->automata[insn->automaton];
	w.accept = a->accept;
	w.str = str;
	w.n = tpkit_filter_clamp(n, TPKIT_FILTER_STRING_MAX);
	w.star = a->star;
	w.to_nul = to_nul;
	w.state = 1;
	w.state |= (w.state & w.star) << 1;
	bpf_loop((w.n + TPKIT_FILTER_CHUNK - 1) / TPKIT_FILTER_CHUNK, tpkit_filter_walk_chunk, &w, 0);
	return w.state & (1u << (insn->accept_bit & 31));
}

static __always_inline bool tpkit_filter_string(void *ctx,
						const volatile struct tpkit_filter_prog *prog,
						const volatile struct tpkit_filter_insn *insn,
						void *user_str)
{
	char comm[TPKIT_FILTER_COMM_LEN] = {};
	const void *str = ctx + insn->offset;
	__u32 len = insn->size, plen = insn->pattern_len, loc = 0;

	switch (insn->source) {
	case TPKIT_FILTER_SRC_COMM:
		bpf_get_current_comm(comm, sizeof(comm));
		str = comm;
		len = TPKIT_FILTER_COMM_LEN;
		break;
	case TPKIT_FILTER_SRC_STR_DATA_LOC:
	case TPKIT_FILTER_SRC_STR_REL_LOC:
		bpf_probe_read_kernel(&loc, sizeof(loc), ctx + insn->offset);
		len = loc >> 16;
		str = ctx + (loc & 0xffff);
		if (insn->source == TPKIT_FILTER_SRC_STR_REL_LOC)
			str += insn->offset + sizeof(loc);
		break;
	case TPKIT_FILTER_SRC_STR_USER: {
		struct tpkit_filter_user_str *buf;
		__u32 zero = 0;
		__u64 ptr = 0;
		long n;

		buf = bpf_map_lookup_elem(user_str, &zero);
		if (!buf)
			return false;
		bpf_probe_read_kernel(&ptr, sizeof(ptr), ctx + insn->offset);
		n = bpf_probe_read_user_str(buf->text, sizeof(buf->text), (const void *)ptr);
		if (n <= 0) { /* a fault reads as "" */
			buf->text[0] = '\0';
			n = 1;
		}
		str = buf->text;
		len = n; /* its NUL included, as a __data_loc string's */
		break;
	}
	}

	switch (insn->op) {
	case TPKIT_FILTER_OP_STR_FULL:
		/* Comparing plen + 1 bytes always reaches the pattern's NUL. */
		return tpkit_filter_prefix_equal(str, len && len < plen + 1 ? len : plen + 1, insn, true);
	case TPKIT_FILTER_OP_STR_FRONT:
		if (len && len < plen)
			return false;
		return tpkit_filter_prefix_equal(str, plen, insn, true);
	case TPKIT_FILTER_OP_STR_END:
		if (len == 0 || len - 1 < plen)
			return false;
		return tpkit_filter_prefix_equal(str + (len - 1 - plen), plen, insn, false);
	case TPKIT_FILTER_OP_STR_GLOB:
	case TPKIT_FILTER_OP_STR_SCAN:
		/* len 0: a string that ends at its NUL (strstr, glob_match). */
		return tpkit_filter_automaton(str, len ? len : TPKIT_FILTER_STRING_MAX,
					      insn->op == TPKIT_FILTER_OP_STR_GLOB || len == 0, prog, insn);
	}
	return false;
}

/* Whether the event whose record is ctx passes the filter.
 *
 * pc is the loop's only variable: it is a known constant at every step (targets come from
 * rodata) and only moves forward, so the verifier follows each instruction once per path into it
 * and merges paths that meet at the same pc. A separate step counter would keep states that
 * reach the same pc after different numbers of steps apart, and the largest programs would
 * exceed the verifier's 1M-instruction budget. */
static __always_inline bool tpkit_filter_match(void *ctx,
					       const volatile struct tpkit_filter_prog *prog,
					       void *user_str)
{
	__u32 len = prog->len, pc = 0;

	if (len > TPKIT_FILTER_MAX_INSNS)
		return false;
	while (pc < len) {
		const volatile struct tpkit_filter_insn *insn = &prog->insns[pc];
		__u32 next;
		bool holds;

		if (tpkit_filter_is_number(insn->source))
			holds = tpkit_filter_compare(insn, tpkit_filter_number(ctx, prog, insn));
		else
			holds = tpkit_filter_string(ctx, prog, insn, user_str);
		next = holds == insn->branch_on ? insn->target : pc + 1;
		if (next <= pc)
			return false; /* malformed: never loop */
		pc = next;
	}
	return pc == len;
}

#endif
