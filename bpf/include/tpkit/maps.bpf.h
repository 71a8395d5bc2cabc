/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Keyed maps of aggregating programs: insert-on-first-use with what did not fit counted, and
 * maps that user space drains while BPF keeps counting, without losing an increment.
 *
 * Events that find no room for their key in a full map are reported, never silently dropped:
 * the functions here count them in `missed`, the tool's
 *
 *	struct tpkit_counter_map tpkit_missed SEC(".maps");
 *
 * which user space watches under that name (MissedWatch in maps.hpp). */
#ifndef TPKIT_MAPS_BPF_H
#define TPKIT_MAPS_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/counter.bpf.h>

/* A map holding a zero-filled value of TYPE, for inserting a key's first value without putting
 * a large value on the 512-byte stack (tpkit_lookup_or_zero):
 *
 *	TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_hist SEC(".maps");
 */
#define TPKIT_ZERO_VALUE(value_type)                   \
	struct {                                       \
		__uint(type, BPF_MAP_TYPE_ARRAY);      \
		__uint(max_entries, 1);                \
		__type(key, __u32);                    \
		__type(value, value_type);             \
	}

/* A keyed map that user space drains at every interval (SwappedMap in maps.hpp). Reading and
 * deleting a key while a program holds a pointer to its value loses that program's increment,
 * so there are two maps, NAME_a and NAME_b, and NAME, an array of maps whose one slot holds the
 * map programs update now. User space points the slot at the other map (the kernel returns from
 * that update only once every program that could still use the old map has finished), then
 * drains the old map alone. max_entries is set by user space before load.
 *
 *	TPKIT_SWAPPED_HALF(hists, BPF_MAP_TYPE_PERCPU_HASH, struct key, struct value)
 *		hists_a SEC(".maps"), hists_b SEC(".maps");
 *	TPKIT_SWAPPED_SLOT(hists) hists SEC(".maps");
 *
 * - The slot starts empty, meaning NAME_a (TPKIT_ACTIVE_MAP): filling it at load would wait for
 *   a grace period (bench/BENCHMARKS.md) before the tool could start.
 * - The halves are preallocated: a key's first update takes a free entry, where a map without
 *   preallocation allocates one then and can fail under a burst of new keys (the per-CPU
 *   allocator's atomic reserve runs out while drained entries wait for a grace period).
 *   Preallocating costs start-up time a key (per-CPU values most): maps of 10,000 keys are
 *   plain hashes with atomic adds where events are few.
 * - Keys and values are given by size: with an empty slot, clang's BTF reaches the halves'
 *   struct through the slot first and only declares their key type, and a map with BTF types
 *   does not fit a slot made without them on 6.1 (its timer_off differs). */
#define TPKIT_SWAPPED_HALF(name, map_type, key_type, value_type)               \
	struct name##_half {                                                   \
		__uint(type, map_type);                                        \
		__uint(max_entries, 1);                                        \
		__uint(key_size, sizeof(key_type));                            \
		__uint(value_size, sizeof(value_type));                        \
	}

#define TPKIT_SWAPPED_SLOT(name)                                               \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);                      \
		__uint(max_entries, 1);                                        \
		__type(key, __u32);                                            \
		__array(values, struct name##_half);                           \
	}

/* The half of a swapped map that programs update now: the one in its slot, FIRST (its
 * NAME_a) while the slot is empty. */
static __always_inline void *tpkit_active_map(void *swapped, void *first)
{
	__u32 zero = 0;
	void *map = bpf_map_lookup_elem(swapped, &zero);

	return map ? map : first;
}

#define TPKIT_ACTIVE_MAP(name) tpkit_active_map(&name, &name##_a)

/* The key's value in a hash map, inserted from init when missing; NULL (counted in missed) when
 * the map is full. */
static __always_inline void *tpkit_lookup_or_init(void *map, const void *key, const void *init,
						  void *missed)
{
	void *value = bpf_map_lookup_elem(map, key);

	if (value)
		return value;
	bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	value = bpf_map_lookup_elem(map, key);
	if (!value)
		tpkit_count(missed);
	return value;
}

/* The key's value in a hash map, inserted as zero from a TPKIT_ZERO_VALUE map when missing (the
 * zero value is looked up only then); NULL (counted in missed) when the map is full. */
static __always_inline void *tpkit_lookup_or_zero(void *map, const void *key, void *zero_value,
						  void *missed)
{
	__u32 zero = 0;
	void *value = bpf_map_lookup_elem(map, key), *init;

	if (value)
		return value;
	init = bpf_map_lookup_elem(zero_value, &zero);
	if (!init)
		return 0;
	return tpkit_lookup_or_init(map, key, init, missed);
}

#endif
