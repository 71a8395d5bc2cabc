/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The counters tests/bpf/kit_keyed_drain.bpf.c keeps per key: three, so that a value read at
 * the wrong place in a drained batch shows as a wrong figure. */
#ifndef TPKIT_TEST_KIT_KEYED_DRAIN_H
#define TPKIT_TEST_KIT_KEYED_DRAIN_H

struct kit_drain_counters {
	__u64 calls;
	__u64 key_sum;	 /* key + 1 per call */
	__u64 thousands; /* 1000 per call */
};

#endif
