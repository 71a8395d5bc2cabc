/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the aggregating engines (tpcount, tphist) share: their rodata configuration and the --by
 * key of an event. */
#ifndef TPKIT_ENGINE_BPF_H
#define TPKIT_ENGINE_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/engine.h>
#include <tpkit/field.bpf.h>
#include <tpkit/filter.bpf.h>

/* Set by user space between open and load (src/engine.cpp computes them from the format). */
const volatile struct tpkit_engine_config tpkit_config = {};
const volatile struct tpkit_filter_prog tpkit_filter = {};

#include <tpkit/syscall.bpf.h>

/* Set by user space once every instance of a run is attached: what happens while they attach
 * (the run's own bpf() calls among it) is not counted, and counting starts on every event at
 * once. */
volatile bool tpkit_engine_armed;

/* Whether the event is counted: armed, and its record passes the filter. Testing len first
 * lets the verifier drop the whole evaluator when there is none. */
static __always_inline bool tpkit_engine_filter(void *record)
{
	return tpkit_engine_armed && (!tpkit_filter.len || tpkit_filter_match(record, &tpkit_filter));
}

/* The --by key of an event (its index in the tool's list) from its record; key must be
 * zero-filled. */
static __always_inline void tpkit_engine_key(void *record, __u32 event, struct tpkit_engine_key *key)
{
	key->event = event;
	switch (tpkit_config.key_source) {
	case TPKIT_KEY_COMM:
		bpf_get_current_comm(key->str, TPKIT_COMM_LEN);
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
			key->number = tpkit_field_number(record, &tpkit_config.key_field);
		else
			if (tpkit_field_string(record, &tpkit_config.key_field, key->str, sizeof(key->str)))
				key->flags |= TPKIT_KEY_CUT;
		break;
	}
}

#endif
