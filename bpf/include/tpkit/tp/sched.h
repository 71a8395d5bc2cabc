/* sched:sched_process_fork context, two kernel layouts (6.1: comm inline; 6.18: __data_loc). */
#ifndef TPKIT_TP_SCHED_H
#define TPKIT_TP_SCHED_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct trace_event_raw_sched_process_fork___v6_1 {
	struct trace_entry ent;
	char parent_comm[16];
	pid_t parent_pid;
	char child_comm[16];
	pid_t child_pid;
} __attribute__((preserve_access_index));

struct trace_event_raw_sched_process_fork___v6_18 {
	struct trace_entry ent;
	__u32 __data_loc_parent_comm;
	pid_t parent_pid;
	__u32 __data_loc_child_comm;
	pid_t child_pid;
} __attribute__((preserve_access_index));

static __always_inline pid_t tpkit_sched_process_fork_child_pid(void *ctx)
{
	struct trace_event_raw_sched_process_fork___v6_1 *v6_1 = ctx;
	struct trace_event_raw_sched_process_fork___v6_18 *v6_18 = ctx;

	if (bpf_core_field_exists(v6_1->parent_comm))
		return BPF_CORE_READ(v6_1, child_pid);
	return BPF_CORE_READ(v6_18, child_pid);
}

static __always_inline long tpkit_data_loc_str(void *ctx, __u32 loc, char *dst, __u32 size)
{
	return bpf_probe_read_kernel_str(dst, size, (char *)ctx + (loc & 0xFFFF));
}

static __always_inline long tpkit_sched_process_fork_parent_comm(void *ctx, char *dst, __u32 size)
{
	struct trace_event_raw_sched_process_fork___v6_1 *v6_1 = ctx;
	struct trace_event_raw_sched_process_fork___v6_18 *v6_18 = ctx;

	if (bpf_core_field_exists(v6_1->parent_comm))
		return bpf_probe_read_kernel_str(dst, size, &v6_1->parent_comm);
	return tpkit_data_loc_str(ctx, BPF_CORE_READ(v6_18, __data_loc_parent_comm), dst, size);
}

static __always_inline long tpkit_sched_process_fork_child_comm(void *ctx, char *dst, __u32 size)
{
	struct trace_event_raw_sched_process_fork___v6_1 *v6_1 = ctx;
	struct trace_event_raw_sched_process_fork___v6_18 *v6_18 = ctx;

	if (bpf_core_field_exists(v6_1->child_comm))
		return bpf_probe_read_kernel_str(dst, size, &v6_1->child_comm);
	return tpkit_data_loc_str(ctx, BPF_CORE_READ(v6_18, __data_loc_child_comm), dst, size);
}

#endif
