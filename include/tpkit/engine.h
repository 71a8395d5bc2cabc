/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Configuration and records shared by the generic engines (bpf/tpsnoop.bpf.c, bpf/tpcount.bpf.c,
 * bpf/tphist.bpf.c) and user space (src/engine/engine.cpp, src/engine/decode.cpp). Plain C, fixed-width types,
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
	TPKIT_FIELD_STR_USER,      /* a syscall's string argument: the user memory the u64 at offset
				    * points to (tpkit::is_syscall_user_string) */
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

/* What --by groups by: one part of a key, or several ("pid,comm", "kstack,ustack"). */
enum tpkit_key_source {
	TPKIT_KEY_NONE = 0,
	TPKIT_KEY_COMM,   /* the current task's comm */
	TPKIT_KEY_PID,    /* the current process (tgid) */
	TPKIT_KEY_TID,    /* the current thread */
	TPKIT_KEY_CPU,
	TPKIT_KEY_FIELD,  /* a field of the record, number or string (tpkit_engine_config.key_field) */
	TPKIT_KEY_KSTACK, /* the kernel stack, an ID in the engine's stack map */
	TPKIT_KEY_USTACK, /* the user stack, likewise */
};
/* tpkit_engine_config.key_parts: one bit per source of the key. */
#define TPKIT_KEY_BIT(source) (1u << (source))

/* Frames kept of a stack (the kernel's PERF_MAX_STACK_DEPTH). */
#define TPKIT_STACK_DEPTH 127
/* A stack ID of the key when the stack was not taken: no such part. */
#define TPKIT_NO_STACK (-1)

/* tpkit_engine_key.flags: the string was longer than str holds and was cut there. Such keys
 * stay apart from the string of exactly the first TPKIT_KEY_STR_MAX - 1 characters. */
#define TPKIT_KEY_CUT 1u

/* A group's key in the aggregation maps: one member per part, those of parts not in the key
 * stay zero. */
struct tpkit_engine_key {
	__u64 number;                 /* the numeric field, as a u64 */
	__u32 event;                  /* index of the event in the tool's list */
	__u32 flags;                  /* TPKIT_KEY_CUT */
	__u32 pid;                    /* tgid */
	__u32 tid;
	__u32 cpu;
	__s32 kernel_stack_id;        /* in tpkit_stacks, or -errno when it could not be taken */
	__s32 user_stack_id;
	__u32 reserved;
	char comm[TPKIT_COMM_LEN];
	char str[TPKIT_KEY_STR_MAX];  /* the string field, NUL-padded */
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
/* `char *` fields of one event whose kernel strings tpsnoop reads (the reference kernels'
 * events have at most two). */
#define TPKIT_SNOOP_MAX_KERNEL_STRINGS 4
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
	__u8 key_parts;               /* TPKIT_KEY_BIT() of each part of the --by key; 0: none */
	__u8 hist_layout;             /* enum tpkit_hist_layout */
	__u8 sub_bits;                /* log-linear sub-bucket bits */
	__u8 syscall_tracepoint;      /* enum tpkit_syscall_tracepoint: a raw_syscalls program */
	__u32 dynamic_offsets[TPKIT_SNOOP_MAX_DYNAMIC];
	__u32 event_id;               /* the event's ID, its records' common_type (tpsnoop) */
	__u8 syscall_args;            /* the arguments a raw_syscalls program reads: bit i, args[i] */
	__u8 user_strings;            /* tpsnoop, classic syscall events: the user strings it sends
				       * (bit i: the one args[i] points to) */
	__u8 kernel_strings;          /* tpsnoop: how many kernel_string_offsets are used */
	__u8 reserved;
	/* tpsnoop: the `char *` fields (their offsets) whose strings in kernel memory are sent */
	__u32 kernel_string_offsets[TPKIT_SNOOP_MAX_KERNEL_STRINGS];
	__u64 jiffies_address;        /* tpsnoop: where jiffies_64 is, when the print fmt reads it */
};

/* Syscall events through the raw tracepoints raw_syscalls:sys_enter / sys_exit, which fire for
 * every syscall: one engine instance stands for many syscalls:sys_enter_* or sys_exit_* events,
 * picked by syscall number, and builds the record each classic event would have built. */
enum tpkit_syscall_tracepoint {
	TPKIT_SYSCALL_NONE = 0, /* a classic tracepoint */
	TPKIT_SYSCALL_ENTER,    /* raw_syscalls:sys_enter, records of syscalls:sys_enter_* */
	TPKIT_SYSCALL_EXIT,     /* raw_syscalls:sys_exit, records of syscalls:sys_exit_* */
};

/* Syscall numbers the raw instances look up: above x86-64's ~470 with room to grow, below
 * x32's (bit 30), which the classic events skip as well. */
#define TPKIT_SYSCALL_NR_MAX 1024

/* The record of syscalls:sys_enter_X (the arguments, as 64-bit words, whatever their C type)
 * and syscalls:sys_exit_X (ret in args[0]): the layout the kernel's formats give at offsets 8,
 * 16, 24... on every kernel (struct syscall_trace_enter / syscall_trace_exit). */
struct tpkit_syscall_record {
	__u64 common;   /* common_* header: common_type and common_pid filled in for tpsnoop */
	__s32 nr;       /* __syscall_nr */
	__u32 reserved;
	__u64 args[6];
};

/* What a raw instance knows of each syscall number (an array map indexed by number). */
struct tpkit_syscall_event {
	__u32 traced;      /* 0: not one of the run's events */
	__u32 event;       /* index of the event in the tool's list */
	__u32 event_id;    /* the classic event's ID: its records' common_type (tpsnoop) */
	__u32 record_size; /* bytes of its record (tpsnoop) */
	__u32 user_strings; /* the user strings tpsnoop sends (bit i: the one args[i] points to) */
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
	/* Bit i: the string follows, in a struct tpkit_user_str, that a syscall event's args[i]
	 * points to (user memory), or any other event's i-th `char *` field (kernel memory, see
	 * tpkit_engine_config.kernel_string_offsets); one per bit, in the order of the bits, from
	 * tpkit_strings_offset(record_size) bytes after the header (the record, then zeros). */
	__u32 user_strings;
	__u32 reserved;
	__u64 jiffies;       /* jiffies_64 at the event, when the event's print fmt reads it; else 0 */
};

/* Where the strings of a record of RECORD_SIZE bytes start, after the header: past the record,
 * 8-aligned, and never before the end of a syscall record (which the raw path pads with zeros). */
static inline __u32 tpkit_strings_offset(__u32 record_size)
{
	__u32 end = (record_size + 7) & ~7u;

	return end > sizeof(struct tpkit_syscall_record) ? end : sizeof(struct tpkit_syscall_record);
}

/* Bytes of a syscall's string argument that are read, its NUL included: longer strings are cut
 * at TPKIT_USER_STR_MAX - 1 characters and marked so. */
#define TPKIT_USER_STR_MAX 256
/* tpkit_user_str.flags: the string goes on past the bytes read. */
#define TPKIT_USER_STR_CUT 1u

/* A syscall's string argument as read from the calling process at the event. */
struct tpkit_user_str {
	__s32 len;    /* bpf_probe_read_user_str(): bytes read, NUL included; < 0: -errno (a fault) */
	__u32 flags;  /* TPKIT_USER_STR_CUT */
	char text[TPKIT_USER_STR_MAX];
};

#endif
