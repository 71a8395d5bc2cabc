/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the aggregating engines (tpcount, tphist, tplat) share: their rodata configuration and the
 * --by key of an event. Their maps, which user space reads by these names (src/engine/):
 *
 *	struct tpkit_filter_user_str_map tpkit_filter_user_str SEC(".maps");
 *	struct tpkit_syscall_events_map tpkit_syscall_events SEC(".maps");
 *	TPKIT_STACK_MAP(TPKIT_STACK_DEPTH) tpkit_stacks SEC(".maps");
 *	struct tpkit_counter_map tpkit_stack_errors SEC(".maps");
 *	struct tpkit_pid_comms_map tpkit_pid_comms SEC(".maps");
 */
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

/* Whether the event's record passes the filter (user_str: tpkit_filter_user_str). Testing len
 * first lets the verifier drop the whole evaluator when there is none. */
static __always_inline bool tpkit_engine_filter(void *record, void *user_str)
{
	return !tpkit_filter.len || tpkit_filter_match(record, &tpkit_filter, user_str);
}

/* --by kstack/ustack: the stacks of the keys go to `stacks` (tpkit_stacks, max_entries set by
 * user space: 1 without stack keys). Those not recorded, the stack map full (-ENOMEM) or a hash
 * collision with another stack (-EEXIST), are counted in `errors` (tpkit_stack_errors); the key
 * keeps the error, so the event still counts, under a "missed" stack. */
static __always_inline __s32 tpkit_engine_stack(void *ctx, __u64 flags, void *stacks, void *errors)
{
	long id = bpf_get_stackid(ctx, stacks, flags);

	/* -EFAULT: no stack to walk (the user stack of a kernel thread), not a loss. */
	if (id < 0 && id != -14)
		tpkit_count(errors);
	return id;
}

/* The comm of each process of a key with a pid and no comm, for the headings of per-pid
 * histograms ("pid = 181 bash"): the first comm seen, until user space reads and deletes it.
 * Set up by user space (tpkit_pid_comms sized to the keys); a full map leaves the comm to
 * user space (/proc/PID/comm). */
const volatile bool tpkit_key_pid_comms = false;
struct tpkit_pid_comms_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, TPKIT_COMM_LEN);
};

static __always_inline void tpkit_note_pid_comm(void *pid_comms, __u32 pid)
{
	char comm[TPKIT_COMM_LEN];

	if (bpf_map_lookup_elem(pid_comms, &pid))
		return;
	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(pid_comms, &pid, comm, BPF_NOEXIST);
}

static __always_inline bool tpkit_engine_keyed(void)
{
	return tpkit_config.key_parts != 0;
}

/* The --by key of an event (its index in the tool's list): each part of tpkit_config.key_parts
 * from the current task, the record, or (stacks) ctx, the program's own context, with the maps
 * above. key must be zero-filled. */
static __always_inline void tpkit_engine_key_with(void *stacks, void *stack_errors,
						  void *pid_comms, void *ctx, void *record,
						  __u32 event, struct tpkit_engine_key *key)
{
	__u8 parts = tpkit_config.key_parts;
	__u64 id = bpf_get_current_pid_tgid();

	key->event = event;
	/* A user stack's addresses mean something in its process only. */
	if (parts & (TPKIT_KEY_BIT(TPKIT_KEY_PID) | TPKIT_KEY_BIT(TPKIT_KEY_USTACK)))
		key->pid = id >> 32;
	if ((parts & TPKIT_KEY_BIT(TPKIT_KEY_PID)) && tpkit_key_pid_comms)
		tpkit_note_pid_comm(pid_comms, key->pid);
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
		key->kernel_stack_id = tpkit_engine_stack(ctx, 0, stacks, stack_errors);
	if (parts & TPKIT_KEY_BIT(TPKIT_KEY_USTACK))
		key->user_stack_id = tpkit_engine_stack(ctx, BPF_F_USER_STACK, stacks, stack_errors);
}

/* tpkit_engine_key_with() the tool's maps, by their names. */
#define tpkit_engine_key(ctx, record, event, key)                                         \
	tpkit_engine_key_with(&tpkit_stacks, &tpkit_stack_errors, &tpkit_pid_comms, (ctx), \
			      (record), (event), (key))

#endif
