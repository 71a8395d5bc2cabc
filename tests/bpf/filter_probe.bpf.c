/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test program for the filter evaluator: attached at run time to any classic tracepoint, it runs
 * tpkit_filter_match() on each event of one process (or of every process) and sends the raw
 * record with the verdict, so that a test can check the verdict against the user-space evaluator
 * and the kernel's filter. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/filter.bpf.h>
#include "filter_probe.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile struct tpkit_filter_prog tpkit_filter = {};
const volatile __u32 target_tgid = 0;
/* Events of every process (exec happens in new children): the test picks its own. Not the
 * parent's tgid, which takes CO-RE, and libbpf would parse the kernel's BTF at every load. */
const volatile bool any_process = false;
/* Bytes of the record to send: the fixed part plus room for its __data_loc strings. */
const volatile __u32 record_size = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} samples SEC(".maps");

/* The evaluator's buffer for user strings (filter.bpf.h). */
struct tpkit_filter_user_str_map tpkit_filter_user_str SEC(".maps");

SEC("tracepoint")
int filter_probe(void *ctx)
{
	struct filter_probe_sample *s;
	__u32 size = record_size;

	if (!any_process && (bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s)
		return 0;
	if (size > FILTER_PROBE_RECORD_MAX)
		size = FILTER_PROBE_RECORD_MAX;
	s->record_size = size;
	s->reserved = 0;
	bpf_probe_read_kernel(s->record, size, ctx);
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	s->cpu = bpf_get_smp_processor_id();
	s->verdict = tpkit_filter_match(ctx, &tpkit_filter, &tpkit_filter_user_str);
	bpf_ringbuf_submit(s, 0);
	return 0;
}
