/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What tests/bpf/kit_timing.bpf.c sends at the end of each timed nanosleep. */
#ifndef TPKIT_TEST_KIT_TIMING_H
#define TPKIT_TEST_KIT_TIMING_H

struct kit_timing_event {
	__u64 elapsed_ns;
	__u32 tid;
	__u32 reserved;
};

#endif
