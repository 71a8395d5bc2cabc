/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the aggregating engines (tpcount, tphist) share: their rodata configuration and the --by
 * key of an event. */
#ifndef TPKIT_ENGINE_BPF_H
#define TPKIT_ENGINE_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/armed.bpf.h>
#include <tpkit/counter.bpf.h>
#include <tpkit/engine.h>
#include <tpkit/field.bpf.h>
#include <tpkit/filter.bpf.h>
#include <tpkit/stack.bpf.h>

/* Set by user space between open and load (src/engine/engine.cpp computes them from the format). */
const volatile struct tpkit_engine_config tpkit_config = {};
const volatile struct tpkit_filter_prog tpkit_filter = {};

#include <tpkit/syscall.bpf.h>

/* Whether the event's record passes the filter. Testing len first lets the verifier drop the
 * whole evaluator when there is none. */
static __always_inline bool tpkit_engine_filter(void *record)
{
	return !tpkit_filter.len || tpkit_filter_match(record, &tpkit_filter);
}

/* --by kstack/ustack: the stacks of the keys; max_entries set by user space (1 without stack
 * keys). */
TPKIT_STACK_MAP(tpkit_stacks, TPKIT_STACK_DEPTH);

/* Stacks not recorded: the stack map full (-ENOMEM) or a hash collision with another stack
 * (-EEXIST). The key keeps the error, so the event still counts, under a "missed" stack. */
TPKIT_COUNTER(tpkit_stack_errors);

static __always_inline __s32 tpkit_engine_stack(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &tpkit_stacks, flags);

	/* -EFAULT: no stack to walk (the user stack of a kernel thread), not a loss. */
	if (id < 0 && id != -14)
		tpkit_count(&tpkit_stack_errors);
	return id;
}

/* The comm of each process of a key with a pid and no comm, for the headings of per-pid
 * histograms ("pid = 181 bash"): the first comm seen, until user space reads and deletes it.
 * Set up by user space (tpkit_pid_comms sized to the keys); a full map leaves the comm to
 * user space (/proc/PID/comm). */
const volatile bool tpkit_key_pid_comms = false;
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, TPKIT_COMM_LEN);
} tpkit_pid_comms SEC(".maps");

static __always_inline void tpkit_note_pid_comm(__u32 pid)
{
	char comm[TPKIT_COMM_LEN];

	if (bpf_map_lookup_elem(&tpkit_pid_comms, &pid))
		return;
	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&tpkit_pid_comms, &pid, comm, BPF_NOEXIST);
}

static __always_inline bool tpkit_engine_keyed(void)
{
	return tpkit_config.key_parts != 0;
}

/* The --by key of an event (its index in the tool's list): each part of tpkit_config.key_parts
 * from the current task, the record, or (stacks) ctx, the program's own context. key must be
 * zero-filled. */
static __always_inline void tpkit_engine_key(void *ctx, void *record, __u32 event,
					     struct tpkit_engine_key *key)
{
	__u8 parts = tpkit_config.key_parts;
	__u64 id = bpf_get_current_pid_tgid();

	key->event = event;
	/* A user stack's addresses mean something in its process only. */
	if (parts & (TPKIT_KEY_BIT(TPKIT_KEY_PID) | TPKIT_KEY_BIT(TPKIT_KEY_USTACK)))
		key->pid = id >> 32;
	if ((parts & TPKIT_KEY_BIT(TPKIT_KEY_PID)) && tpkit_key_pid_comms)
		tpkit_note_pid_comm(key->pid);
	if (parts & TPKIT_KEY_BIT(TPKIT_KEY_TID))
		key->tid = (__u32)id;
	if (parts & TPKIT_KEY_BIT(TPKIT_KEY_CPU))
		key->cpu = bpf_get_smp_processor_id();
	if (parts & TPKIT_KEY_BIT(TPKIT_KEY_COMM))
		bpf_get_current_comm(key->comm, sizeof(key->comm));
	if (parts & TPKIT_KEY_BIT(TPKIT_KEY_FIELD)) {
		if (tpkit_config.key_field.access == TPKIT_FIELD_LOAD ||
		    tpkit_config.key_field.access == TPKIT_FIELD_PROBE)
			key->number = tpkit_field_number(record, &tpkit_config.key_field);
		else if (tpkit_field_string(record, &tpkit_config.key_field, key->str, sizeof(key->str)))
			key->flags |= TPKIT_KEY_CUT;
	}
	key->kernel_stack_id = TPKIT_NO_STACK;
	key->user_stack_id = TPKIT_NO_STACK;
	if (parts & TPKIT_KEY_BIT(TPKIT_KEY_KSTACK))
		key->kernel_stack_id = tpkit_engine_stack(ctx, 0);
	if (parts & TPKIT_KEY_BIT(TPKIT_KEY_USTACK))
		key->user_stack_id = tpkit_engine_stack(ctx, BPF_F_USER_STACK);
}

#endif
