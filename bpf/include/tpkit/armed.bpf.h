/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The generic engines' on/off switch, the first thing each of their programs tests. User space
 * turns it on once a run is attached (tpcount, tphist, tplat: what the attaching itself causes is
 * not counted, and counting starts on every event at once; tpsnoop: once loaded, so that each
 * event streams from its attach) and off as the run ends: classic tracepoints detach one after
 * another, each waiting for the kernel (bench/BENCHMARKS.md), and the programs still attached
 * meanwhile do nothing. */
#ifndef TPKIT_ARMED_BPF_H
#define TPKIT_ARMED_BPF_H

#include <bpf/bpf_helpers.h>

volatile bool tpkit_engine_armed;

#endif
