/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test program for the keyed drain (include/tpkit/bpf/maps.hpp): each close() of the selected process
 * on a file descriptor in [first_fd, first_fd + keys) counts for key fd - first_fd, in a per-CPU
 * hash and in a plain hash the CPUs share, both swapped maps that user space drains meanwhile. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include "kit_keyed_drain.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

const volatile __u64 first_fd = 0;
const volatile __u64 keys = 0;

TPKIT_SWAPPED_HALF(per_cpu_counts, BPF_MAP_TYPE_PERCPU_HASH, __u32, struct kit_drain_counters)
	per_cpu_counts_a SEC(".maps"), per_cpu_counts_b SEC(".maps");
TPKIT_SWAPPED_SLOT(per_cpu_counts) per_cpu_counts SEC(".maps");
TPKIT_SWAPPED_HALF(shared_counts, BPF_MAP_TYPE_HASH, __u32, struct kit_drain_counters)
	shared_counts_a SEC(".maps"), shared_counts_b SEC(".maps");
TPKIT_SWAPPED_SLOT(shared_counts) shared_counts SEC(".maps");
TPKIT_ZERO_VALUE(struct kit_drain_counters) zero_counters SEC(".maps");

/* syscalls:sys_enter_close as its format file lays it out. */
struct close_enter {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 fd;
};

SEC("tracepoint/syscalls/sys_enter_close")
int count_close(struct close_enter *ctx)
{
	struct kit_drain_counters *c;
	__u64 fd = ctx->fd;
	void *map;
	__u32 key;

	if (!tpkit_current_selected() || fd < first_fd || fd - first_fd >= keys)
		return 0;
	key = fd - first_fd;
	map = TPKIT_ACTIVE_MAP(per_cpu_counts);
	c = map ? tpkit_lookup_or_zero(map, &key, &zero_counters, &tpkit_missed) : 0;
	if (c) {
		c->calls += 1;
		c->key_sum += key + 1;
		c->thousands += 1000;
	}
	map = TPKIT_ACTIVE_MAP(shared_counts);
	c = map ? tpkit_lookup_or_zero(map, &key, &zero_counters, &tpkit_missed) : 0;
	if (c) {
		__sync_fetch_and_add(&c->calls, 1);
		__sync_fetch_and_add(&c->key_sum, key + 1);
		__sync_fetch_and_add(&c->thousands, 1000);
	}
	return 0;
}
