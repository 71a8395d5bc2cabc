/* What the aggregating engines (tpcount, tphist) share: their rodata configuration, the --by key
 * of an event, and keyed map updates that count what did not fit. */
#ifndef TPKIT_ENGINE_BPF_H
#define TPKIT_ENGINE_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/counter.bpf.h>
#include <tpkit/engine.h>
#include <tpkit/field.bpf.h>
#include <tpkit/filter.bpf.h>

/* Set by user space between open and load (src/engine.cpp computes them from the format). */
const volatile struct tpkit_engine_config tpkit_config = {};
const volatile struct tpkit_filter_prog tpkit_filter = {};

/* Events that found no room for their key in a full map: reported, never silently dropped. */
TPKIT_COUNTER(tpkit_missed);

/* Whether the event passes the filter. Testing len first lets the verifier drop the whole
 * evaluator when there is none. */
static __always_inline bool tpkit_engine_filter(void *ctx)
{
	return !tpkit_filter.len || tpkit_filter_match(ctx, &tpkit_filter);
}

/* The event's --by key; key must be zero-filled. */
static __always_inline void tpkit_engine_key(void *ctx, struct tpkit_engine_key *key)
{
	key->event = tpkit_config.event;
	switch (tpkit_config.key_source) {
	case TPKIT_KEY_COMM:
		bpf_get_current_comm(key->str, TPKIT_COMM_MAX);
		break;
	case TPKIT_KEY_PID:
		key->number = bpf_get_current_pid_tgid() >> 32;
		break;
	case TPKIT_KEY_TID:
		key->number = (__u32)bpf_get_current_pid_tgid();
		break;
	case TPKIT_KEY_CPU:
		key->number = bpf_get_smp_processor_id();
		break;
	case TPKIT_KEY_FIELD:
		if (tpkit_config.key_field.access == TPKIT_FIELD_LOAD ||
		    tpkit_config.key_field.access == TPKIT_FIELD_PROBE)
			key->number = tpkit_field_number(ctx, &tpkit_config.key_field);
		else
			tpkit_field_string(ctx, &tpkit_config.key_field, key->str, sizeof(key->str));
		break;
	}
}

/* The key's value in a hash map, inserted from init when missing; NULL (counted) when the map
 * is full. */
static __always_inline void *tpkit_lookup_or_init(void *map, const void *key, const void *init)
{
	void *value = bpf_map_lookup_elem(map, key);

	if (value)
		return value;
	bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	value = bpf_map_lookup_elem(map, key);
	if (!value)
		tpkit_count(&tpkit_missed);
	return value;
}

#endif
