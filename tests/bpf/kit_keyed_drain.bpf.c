/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Test program for the keyed drain (include/tpkit/bpf/maps.hpp): each close() of the selected process
// on a file descriptor in [first_fd, first_fd + keys) counts for key fd - first_fd, in a per-CPU
// hash and in a plain hash the CPUs share, both swapped maps that user space drains meanwhile.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include "kit_keyed_drain.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u64 first_fd = 0;
const volatile __u64 keys = 0;

TPKIT_SWAPPED_MAP(per_cpu_counts, BPF_MAP_TYPE_PERCPU_HASH, __u32, struct kit_drain_counters);
TPKIT_SWAPPED_MAP(shared_counts, BPF_MAP_TYPE_HASH, __u32, struct kit_drain_counters);
TPKIT_ZERO_VALUE(zero_counters, struct kit_drain_counters);

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
	c = map ? tpkit_lookup_or_zero(map, &key, &zero_counters) : 0;
	if (c) {
		c->calls += 1;
		c->key_sum += key + 1;
		c->thousands += 1000;
	}
	map = TPKIT_ACTIVE_MAP(shared_counts);
	c = map ? tpkit_lookup_or_zero(map, &key, &zero_counters) : 0;
	if (c) {
		__sync_fetch_and_add(&c->calls, 1);
		__sync_fetch_and_add(&c->key_sum, key + 1);
		__sync_fetch_and_add(&c->thousands, 1000);
	}
	return 0;
}
