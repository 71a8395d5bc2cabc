/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Forks seen through the generated, flavoured sched_process_fork getters (tpkit/tp/sched.h):
 * the same object reads comm inline on 6.1 and through __data_loc on 6.18. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/tp/sched.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TPGEN_FORK_MAX 64

/* Only forks made by a process of this comm are recorded. */
const volatile char target_comm[16] = {};

__u32 seen_count;
__s32 parent_pids[TPGEN_FORK_MAX];
__s32 child_pids[TPGEN_FORK_MAX];
char parent_comms[TPGEN_FORK_MAX][16];
char child_comms[TPGEN_FORK_MAX][16];

static __always_inline bool current_is_target(void)
{
	char comm[16];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < 16; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

SEC("tracepoint/sched/sched_process_fork")
int fork_seen(void *ctx)
{
	__u32 i;

	if (!current_is_target())
		return 0;
	/* The forker forks one child at a time: no two of these run at once. */
	i = seen_count;
	if (i >= TPGEN_FORK_MAX)
		return 0;
	seen_count = i + 1;
	parent_pids[i] = tpkit_sched_process_fork_parent_pid(ctx);
	child_pids[i] = tpkit_sched_process_fork_child_pid(ctx);
	tpkit_sched_process_fork_parent_comm(ctx, parent_comms[i], sizeof(parent_comms[i]));
	tpkit_sched_process_fork_child_comm(ctx, child_comms[i], sizeof(child_comms[i]));
	return 0;
}
