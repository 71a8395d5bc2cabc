/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The histograms of the histogram engines (tphist, tplat): log2, log-linear or linear as
 * tpkit_config.hist_layout says, one cumulative histogram without --by, one per key with it.
 * src/collectors/engine_hists.hpp reads them back, by the names of the engine's maps:
 *
 *	TPKIT_ENGINE_TOTAL_MAP(struct tpkit_log2_hist) log2_total SEC(".maps");
 *	TPKIT_ENGINE_TOTAL_MAP(struct tpkit_loglinear_hist) loglinear_total SEC(".maps");
 *	TPKIT_ENGINE_TOTAL_MAP(struct tpkit_linear_hist) linear_total SEC(".maps");
 *	TPKIT_ENGINE_KEYED_HALF(log2_by_key, struct tpkit_log2_hist)
 *		log2_by_key_a SEC(".maps"), log2_by_key_b SEC(".maps");
 *	TPKIT_SWAPPED_SLOT(log2_by_key) log2_by_key SEC(".maps");
 *	(the same for loglinear_by_key and linear_by_key)
 *	TPKIT_ZERO_VALUE(struct tpkit_linear_hist) empty_hist SEC(".maps");
 *	struct tpkit_counter_map tpkit_missed SEC(".maps");
 */
#ifndef TPKIT_ENGINE_HIST_BPF_H
#define TPKIT_ENGINE_HIST_BPF_H

#include <tpkit/engine.bpf.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>

/* Without --by: one cumulative histogram (user space prints differences); only the map of the
 * chosen layout is used, the others stay at one small entry. */
#define TPKIT_ENGINE_TOTAL_MAP(hist_type)                \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, 1);                  \
		__type(key, __u32);                      \
		__type(value, hist_type);                \
	}
/* With --by: one histogram per key, drained at every interval (a swapped map). empty_hist,
 * large enough for every layout, is their first value. */
#define TPKIT_ENGINE_KEYED_HALF(name, hist_type) \
	TPKIT_SWAPPED_HALF(name, BPF_MAP_TYPE_PERCPU_HASH, struct tpkit_engine_key, hist_type)

/* The histogram a value of this key goes to: a value of a per-CPU map, so the adds are plain. */
static __always_inline void *tpkit_engine_histogram(void *total_map, void *keyed_map,
						    void *keyed_first, void *empty, void *missed,
						    const struct tpkit_engine_key *key)
{
	__u32 zero = 0;
	void *keyed;

	if (!tpkit_engine_keyed())
		return bpf_map_lookup_elem(total_map, &zero);
	keyed = tpkit_active_map(keyed_map, keyed_first);
	if (!keyed)
		return 0;
	return tpkit_lookup_or_zero(keyed, key, empty, missed);
}

/* Adds value to the histogram of key (ignored without --by) in the layout of tpkit_config: in
 * each layout's total map, its keyed map and that one's first half. */
static __always_inline void
tpkit_engine_hist_add_to(void *log2_total, void *log2_by_key, void *log2_by_key_a,
			 void *loglinear_total, void *loglinear_by_key, void *loglinear_by_key_a,
			 void *linear_total, void *linear_by_key, void *linear_by_key_a, void *empty,
			 void *missed, const struct tpkit_engine_key *key, __u64 value)
{
	void *hist;

	switch (tpkit_config.hist_layout) {
	case TPKIT_HIST_LOG2:
		hist = tpkit_engine_histogram(log2_total, log2_by_key, log2_by_key_a, empty, missed,
					      key);
		if (hist)
			tpkit_log2_hist_add(hist, value);
		break;
	case TPKIT_HIST_LOGLINEAR:
		hist = tpkit_engine_histogram(loglinear_total, loglinear_by_key, loglinear_by_key_a,
					      empty, missed, key);
		if (hist)
			tpkit_loglinear_hist_add(hist, value, tpkit_config.sub_bits);
		break;
	case TPKIT_HIST_LINEAR:
		hist = tpkit_engine_histogram(linear_total, linear_by_key, linear_by_key_a, empty,
					      missed, key);
		if (hist)
			tpkit_linear_hist_add(hist, value, tpkit_config.linear_min,
					      tpkit_config.linear_max, tpkit_config.linear_step);
		break;
	}
}

/* tpkit_engine_hist_add_to() the tool's maps, by their names. */
#define tpkit_engine_hist_add(key, value)                                                      \
	tpkit_engine_hist_add_to(&log2_total, &log2_by_key, &log2_by_key_a, &loglinear_total,  \
				 &loglinear_by_key, &loglinear_by_key_a, &linear_total,         \
				 &linear_by_key, &linear_by_key_a, &empty_hist, &tpkit_missed,  \
				 (key), (value))

#endif
