/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Configuration and records shared by the generic engines (bpf/tpsnoop.bpf.c, bpf/tpcount.bpf.c,
 * bpf/tphist.bpf.c) and user space (src/engine.cpp, src/decode.cpp). Plain C, fixed-width types,
 * largest fields first, no padding holes.
 *
 * One BPF object instance is loaded per traced event: user space writes the event's field
 * offsets into its rodata, so that the verifier sees them as constants. */
#ifndef TPKIT_ENGINE_H
#define TPKIT_ENGINE_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include "tpkit/limits.h"

/* Direct ctx loads: a tracepoint program may load from its record at an offset >= 8 that is a
 * multiple of the load size (the verifier's tp_prog_is_valid_access). The engines carry one load
 * instruction per such offset below TPKIT_FIELD_LOAD_END; outside, they use probe reads. */
#define TPKIT_FIELD_LOAD_MIN 8
#define TPKIT_FIELD_LOAD_END 264

/* Bytes of a string key (--by of a string field, or comm). */
#define TPKIT_KEY_STR_MAX 64

/* How an engine reads one field of the record. */
enum tpkit_field_access {
	TPKIT_FIELD_NONE = 0,
	TPKIT_FIELD_LOAD,          /* 1/2/4/8-byte integer, aligned, in the direct-load window */
	TPKIT_FIELD_PROBE,         /* other 1/2/4/8-byte integer: bpf_probe_read_kernel */
	TPKIT_FIELD_STR_FIXED,     /* char[N] at offset */
	TPKIT_FIELD_STR_DATA_LOC,  /* __data_loc char[]: u32 at offset, (len << 16) | start */
	TPKIT_FIELD_STR_REL_LOC,   /* __rel_loc char[]: the same, start counted from offset + 4 */
};

struct tpkit_field_spec {
	__u32 offset;
	__u16 size;
	/* TPKIT_FIELD_LOAD: (offset - TPKIT_FIELD_LOAD_MIN) / size, the load's index among those of
	 * its size. Dense indexes from 0 keep clang from turning the selection into arithmetic. */
	__u16 load_slot;
	__u8 access;    /* enum tpkit_field_access */
	__u8 is_signed;
	__u8 reserved[2];
};

/* What --by groups by. */
enum tpkit_key_source {
	TPKIT_KEY_NONE = 0,
	TPKIT_KEY_COMM,   /* the current task's comm */
	TPKIT_KEY_PID,    /* the current process (tgid) */
	TPKIT_KEY_TID,    /* the current thread */
	TPKIT_KEY_CPU,
	TPKIT_KEY_FIELD,  /* a field of the record, number or string (tpkit_engine_config.key_field) */
};

/* tpkit_engine_key.flags: the string was longer than str holds and was cut there. Such keys
 * stay apart from the string of exactly the first TPKIT_KEY_STR_MAX - 1 characters. */
#define TPKIT_KEY_CUT 1u

/* A group's key in the aggregation maps; unused members stay zero. */
struct tpkit_engine_key {
	__u64 number;                 /* pid, tid, cpu or the numeric field, as a u64 */
	__u32 event;                  /* index of the event in the tool's list */
	__u32 flags;                  /* TPKIT_KEY_CUT */
	char str[TPKIT_KEY_STR_MAX];  /* comm or the string field, NUL-padded */
};

/* tphist's bucket layouts (include/tpkit/hist.h). */
enum tpkit_hist_layout {
	TPKIT_HIST_LOG2 = 0,
	TPKIT_HIST_LOGLINEAR,
	TPKIT_HIST_LINEAR,
};

/* Copies of records (tpsnoop): __data_loc/__rel_loc fields whose bytes follow the fixed part, by
 * offset; the high bit marks __rel_loc. */
#define TPKIT_SNOOP_MAX_DYNAMIC 8
#define TPKIT_SNOOP_REL_LOC 0x80000000u

/* An engine's per-event configuration, in rodata. */
struct tpkit_engine_config {
	__u64 linear_min;             /* tphist --linear */
	__u64 linear_max;
	__u64 linear_step;
	struct tpkit_field_spec value;     /* tphist: the measured field */
	struct tpkit_field_spec key_field; /* --by FIELD */
	__u32 event;                  /* index of this event in the tool's list */
	__u32 fixed_size;             /* bytes of the record's fixed part (tpsnoop) */
	__u32 dynamic_count;          /* how many of dynamic_offsets are used (tpsnoop) */
	__u8 key_source;              /* enum tpkit_key_source */
	__u8 hist_layout;             /* enum tpkit_hist_layout */
	__u8 sub_bits;                /* log-linear sub-bucket bits */
	__u8 reserved_byte;
	__u32 dynamic_offsets[TPKIT_SNOOP_MAX_DYNAMIC];
	__u32 event_id;               /* the event's ID, its records' common_type (tpsnoop) */
	__u32 reserved;
};
/* The kernel hands BPF at most PERF_MAX_TRACE_SIZE bytes of record. Its first 8 bytes, the
 * common_* header, are not filled in yet when BPF runs (the kernel keeps a pt_regs pointer
 * there): copies get common_type and common_pid as the kernel will write them, common_flags and
 * common_preempt_count zero (BPF cannot know them; tpsnoop does not print them). */
#define TPKIT_SNOOP_RECORD_MAX 2048

/* tpsnoop's record: this header, then record_size bytes of the raw tracepoint record. */
struct tpsnoop_header {
	__u64 timestamp_ns;  /* bpf_ktime_get_ns() */
	__u32 pid;           /* tgid */
	__u32 tid;
	__u32 cpu;
	__u32 record_size;
	char comm[TPKIT_COMM_LEN];
};

#endif
