/* Filters on the current task shared by the tools: target tgid and comm, set in rodata. */
#ifndef TPKIT_TASK_BPF_H
#define TPKIT_TASK_BPF_H

#include <bpf/bpf_helpers.h>

const volatile __u32 tpkit_target_tgid = 0;
const volatile char tpkit_target_comm[16] = {};

static __always_inline bool tpkit_comm_equal(const char *a, const volatile char *b)
{
#pragma unroll
	for (int i = 0; i < 16; i++) {
		if (a[i] != b[i])
			return false;
		if (a[i] == '\0')
			return true;
	}
	return true;
}

/* Whether the current task passes --pid and --comm. */
static __always_inline bool tpkit_current_selected(void)
{
	if (tpkit_target_tgid && (bpf_get_current_pid_tgid() >> 32) != tpkit_target_tgid)
		return false;
	if (tpkit_target_comm[0]) {
		char comm[16];

		bpf_get_current_comm(comm, sizeof(comm));
		if (!tpkit_comm_equal(comm, tpkit_target_comm))
			return false;
	}
	return true;
}

#endif
