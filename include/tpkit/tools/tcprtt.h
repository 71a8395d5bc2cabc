/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tcprtt's histogram key and value, shared by its BPF program and user space (installed for
 * embedders as <tpkit/tools/tcprtt.h>). */
#ifndef TPKIT_TCPRTT_H
#define TPKIT_TCPRTT_H

#include <tpkit/hist.h>

/* All zero but with -b (-B): the local (remote) address, as struct tpkit_inet_tuple holds it. */
struct tcprtt_key {
	__u8 addr[16];
	__u16 family;
	__u16 reserved[3];
};

struct tcprtt_value {
	struct tpkit_log2_hist hist;
	__u64 total; /* the samples' sum, in the histogram's unit: -e's average */
};

#endif
