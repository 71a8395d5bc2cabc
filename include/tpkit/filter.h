/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A compiled event filter, shared by the compiler (user space, src/engine/filter.cpp) and the BPF
 * evaluator (bpf/include/tpkit/filter.bpf.h). Plain C, fixed-width types, no padding holes.
 *
 * The program is a branch program like the kernel's own filter: instruction i computes its
 * predicate r (true/false); if r == branch_on, execution continues at target, else at i + 1.
 * Targets always lie ahead of i. Reaching len means "the event matches", len + 1 "it does not".
 * Negations (`!`, `!=`, a `~ "!glob"`) are folded into branch_on, so predicates never negate.
 * An empty program (len == 0) matches every event.
 *
 * BPF programs keep it in `const volatile` rodata, set between open and load: the verifier then
 * sees every instruction as constants and only walks the code each instruction really uses. */
#ifndef TPKIT_FILTER_H
#define TPKIT_FILTER_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif

#define TPKIT_FILTER_MAX_INSNS 64
/* Bytes of a string constant, its NUL included: strings of up to 31 characters. */
#define TPKIT_FILTER_PATTERN_MAX 32
/* Patterns matched by the automaton (globs with ?, [..], a * inside, and "*x*") per program. */
#define TPKIT_FILTER_MAX_AUTOMATA 8
/* Bytes of a string field the evaluators look at: PERF_MAX_TRACE_SIZE, the most a tracepoint
 * record can hold, so that every string a record carries is matched whole, as the kernel does. */
#define TPKIT_FILTER_STRING_MAX 8192
/* The kernel's TASK_COMM_LEN, the length it uses for the generic `comm` field. */
#define TPKIT_FILTER_COMM_LEN 16

/* Where a predicate's left side comes from. */
enum tpkit_filter_source {
	TPKIT_FILTER_SRC_UNSIGNED = 0, /* integer of `size` bytes at `offset` in the record */
	TPKIT_FILTER_SRC_SIGNED,       /* the same, sign-extended */
	TPKIT_FILTER_SRC_CPU,          /* generic `cpu`/`CPU`/`common_cpu`: the current CPU, an int */
	TPKIT_FILTER_SRC_STR_FIXED,    /* char array: `size` bytes at `offset` */
	TPKIT_FILTER_SRC_STR_DATA_LOC, /* __data_loc char[]: u32 at `offset`, string at loc & 0xffff */
	TPKIT_FILTER_SRC_STR_REL_LOC,  /* __rel_loc char[]: like data_loc, from the end of the u32 */
	TPKIT_FILTER_SRC_COMM,         /* generic `comm`/`COMM`: the current task's comm */
	/* The common_* header is not in the record yet when BPF runs (the kernel fills it in after
	 * the programs, and keeps a pt_regs pointer in its first 8 bytes until then), so its two
	 * knowable fields come from elsewhere, as the kernel will write them: */
	TPKIT_FILTER_SRC_TID,          /* `common_pid`: the current thread's ID, an int */
	TPKIT_FILTER_SRC_EVENT_ID,     /* `common_type`: tpkit_filter_prog.event_id, an unsigned short */
	TPKIT_FILTER_SRC_STR_USER,     /* a syscall's `const char *`: the u64 at `offset` points to the
					* string in the calling process's memory; its first
					* TPKIT_USER_STR_MAX - 1 bytes are compared, a fault as "" */
};

/* The predicate. Numbers compare the field, read as its type, with `value`; strings follow the
 * kernel's regex types (kernel/trace/trace_events_filter.c), with len = the field's length:
 * the array size, the data_loc length, TASK_COMM_LEN for comm. */
enum tpkit_filter_op {
	TPKIT_FILTER_OP_EQ = 0,   /* numbers */
	TPKIT_FILTER_OP_LT,
	TPKIT_FILTER_OP_LE,
	TPKIT_FILTER_OP_GT,
	TPKIT_FILTER_OP_GE,
	TPKIT_FILTER_OP_BAND,     /* (field & value) != 0 */
	TPKIT_FILTER_OP_STR_FULL, /* strncmp(str, pattern, len) == 0; strcmp when len == 0 */
	TPKIT_FILTER_OP_STR_FRONT,/* "abc*": !(len && len < plen) && strncmp(str, pattern, plen) == 0 */
	TPKIT_FILTER_OP_STR_END,  /* "*abc": len-1 >= plen && memcmp(str + len-1 - plen, pattern, plen) == 0 */
	TPKIT_FILTER_OP_STR_GLOB, /* automaton over the string up to its NUL (glob_match) */
	TPKIT_FILTER_OP_STR_SCAN, /* automaton over all len bytes, NULs too ("*abc*": strnstr) */
};

struct tpkit_filter_insn {
	__u64 value;       /* numeric constant, already truncated and extended like the field */
	__u32 offset;      /* field offset in the record */
	__u16 size;        /* field size in bytes (1, 2, 4, 8 for numbers; array size) */
	__u8 op;           /* enum tpkit_filter_op */
	__u8 source;       /* enum tpkit_filter_source */
	__u8 branch_on;    /* 1: jump when the predicate holds, 0: when it does not */
	__u8 target;       /* instruction to jump to; len = match, len + 1 = no match */
	__u8 pattern_len;  /* string ops: bytes of pattern before its NUL */
	__u8 automaton;    /* GLOB/SCAN: index into tpkit_filter_prog.automata */
	__u8 accept_bit;   /* GLOB/SCAN: the state bit that means "matched" */
	__u8 reserved[11];
	char pattern[TPKIT_FILTER_PATTERN_MAX]; /* NUL-padded */
};

/* A glob as a bit-parallel automaton: state bit p = "the first p pattern items have matched".
 * On byte c: state = (state & star) | ((state & accept[c]) << 1), then state |= (state & star)
 * << 1 (a star may match nothing). Start: bit 0, closed the same way. */
struct tpkit_filter_automaton {
	__u32 accept[256]; /* bit p: item p (a character, ?, or [class]) accepts the byte */
	__u32 star;        /* bit p: item p is a * */
	__u32 reserved;
};

struct tpkit_filter_prog {
	struct tpkit_filter_automaton automata[TPKIT_FILTER_MAX_AUTOMATA];
	struct tpkit_filter_insn insns[TPKIT_FILTER_MAX_INSNS];
	__u32 len;      /* instructions in use */
	__u32 event_id; /* the event the program was compiled for: its records' common_type */
};

#endif
