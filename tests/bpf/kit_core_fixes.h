/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What tests/bpf/kit_core_fixes.bpf.c sends for each switch away from the selected thread. */
#ifndef TPKIT_TEST_KIT_CORE_FIXES_H
#define TPKIT_TEST_KIT_CORE_FIXES_H

struct kit_switch_event {
	__s64 prev_state;    /* tpkit_sched_switch_prev_state() */
	__s64 task_state;    /* tpkit_task_state(prev), read in the tracepoint */
	__u32 prev_tid;
	__u32 prev_runnable; /* tpkit_sched_switch_prev_runnable() */
	__u32 three_args;    /* whether btf_trace_sched_switch has the pre-5.18 three arguments */
	__u32 four_args;     /* whether it has prev_state */
};

#endif
