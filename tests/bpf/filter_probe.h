/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What tests/bpf/filter_probe.bpf.c sends for each event: the raw record, the BPF filter's
 * verdict on it, and the comm and CPU the generic fields saw. */
#ifndef TPKIT_TEST_FILTER_PROBE_H
#define TPKIT_TEST_FILTER_PROBE_H

/* PERF_MAX_TRACE_SIZE: a whole record, long __data_loc strings included. */
#define FILTER_PROBE_RECORD_MAX 8192

struct filter_probe_sample {
	__u32 verdict;
	__u32 cpu;
	__u32 record_size;
	__u32 reserved;
	char comm[16];
	__u8 record[FILTER_PROBE_RECORD_MAX];
};

#endif
