/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Forks seen through the generated raw tracepoint arguments (tpkit/tp/sched_raw.h): the parent's
 * comm, the child's pid, tgid and comm read from their task_structs. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/tp/sched_raw.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TPGEN_FORK_MAX 64

/* Only forks made by a process of this comm are recorded. */
const volatile char target_comm[16] = {};

__u32 seen_count;
__s32 child_pids[TPGEN_FORK_MAX];
__s32 child_tgids[TPGEN_FORK_MAX];
char child_comms[TPGEN_FORK_MAX][16];

SEC("raw_tp/sched_process_fork")
int raw_fork_seen(struct bpf_raw_tracepoint_args *ctx)
{
	struct tpkit_sched_process_fork_raw_args args = tpkit_sched_process_fork_raw_args(ctx);
	struct task_struct *child = args.child;
	char parent_comm[16];
	__u32 i;
	int c;

	BPF_CORE_READ_STR_INTO(&parent_comm, tpkit_sched_process_fork_raw_parent(ctx), comm);
	for (c = 0; c < 16; c++) {
		if (parent_comm[c] != target_comm[c])
			return 0;
		if (!parent_comm[c])
			break;
	}
	/* The forker forks one child at a time: no two of these run at once. */
	i = seen_count;
	if (i >= TPGEN_FORK_MAX)
		return 0;
	seen_count = i + 1;
	child_pids[i] = BPF_CORE_READ(tpkit_sched_process_fork_raw_child(ctx), pid);
	child_tgids[i] = BPF_CORE_READ(child, tgid);
	BPF_CORE_READ_STR_INTO(&child_comms[i], child, comm);
	return 0;
}
