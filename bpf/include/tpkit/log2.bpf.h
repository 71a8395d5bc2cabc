/* The log2 slot functions (tpkit_log2_u32, tpkit_log2_u64) live in the plain-C header shared
 * with user space, so that unit tests run the same code as BPF programs. */
#ifndef TPKIT_LOG2_BPF_H
#define TPKIT_LOG2_BPF_H

#include <tpkit/hist.h>

#endif
