/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// tpsnoop's engine: sends each event of one tracepoint chosen at run time, raw, with who and
// when; user space decodes it from the format. One instance per event; they share the transport.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/engine.h>
#include <tpkit/filter.bpf.h>
#include <tpkit/task.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile struct tpkit_filter_prog tpkit_filter = {};
const volatile struct tpkit_engine_config tpkit_config = {};

#include <tpkit/record.bpf.h>

SEC("tracepoint")
int snoop_event(void *ctx)
{
	struct tpkit_record_copy *r;
	__u64 id, size;

	if (!tpkit_current_selected())
		return 0;
	if (tpkit_filter.len && !tpkit_filter_match(ctx, &tpkit_filter))
		return 0;
	r = tpkit_copy_record(ctx);
	if (!r)
		return 0;
	id = bpf_get_current_pid_tgid();
	r->header.timestamp_ns = bpf_ktime_get_ns();
	r->header.pid = id >> 32;
	r->header.tid = (__u32)id;
	r->header.cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(r->header.comm, sizeof(r->header.comm));
	size = r->header.record_size;
	asm volatile("" : "+r"(size)); /* bound this very register for the verifier */
	if (size > TPKIT_SNOOP_RECORD_MAX)
		size = TPKIT_SNOOP_RECORD_MAX;
	tpkit_emit(ctx, r, sizeof(r->header) + size);
	return 0;
}
