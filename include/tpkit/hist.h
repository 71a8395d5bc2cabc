/* Histogram layout shared by BPF programs and user space: plain C, fixed-width types. */
#ifndef TPKIT_HIST_H
#define TPKIT_HIST_H

/* log2 slots: slot i counts values v with floor(log2(v)) == i (0 and 1 share slot 0), so 64
 * slots cover every __u64. */
#define TPKIT_LOG2_SLOTS 64

struct tpkit_log2_hist {
	__u64 slots[TPKIT_LOG2_SLOTS];
};

#endif
