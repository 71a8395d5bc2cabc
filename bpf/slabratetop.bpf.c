/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Slab allocations per cache, drained every interval, from the raw tracepoint
 * kmem:kmem_cache_alloc: its struct kmem_cache * argument names the cache on every kernel
 * (the record's name field came only after 6.1). The kernel fires it for kmem_cache_alloc(),
 * its _lru and _node variants alike; kmalloc() fires kmem:kmalloc instead, which is not here. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/kmem_raw.h>
#include <tpkit/tools/slabratetop.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

/* Per CPU: allocations come from every CPU at once, often thousands a second. */
TPKIT_SWAPPED_HALF(counts, BPF_MAP_TYPE_PERCPU_HASH, struct slabratetop_key, struct slabratetop_counts)
	counts_a SEC(".maps"), counts_b SEC(".maps");
TPKIT_SWAPPED_SLOT(counts) counts SEC(".maps");
TPKIT_ZERO_VALUE(struct slabratetop_counts) zero_counts SEC(".maps");

SEC("raw_tp/kmem_cache_alloc")
int cache_alloc(struct bpf_raw_tracepoint_args *ctx)
{
	struct kmem_cache *s = tpkit_kmem_cache_alloc_raw_s(ctx);
	struct slabratetop_key key = {};
	struct slabratetop_counts *c;
	void *active;

	/* A failed allocation handed nothing out. */
	if (!tpkit_kmem_cache_alloc_raw_ptr(ctx) || !s || !tpkit_current_selected())
		return 0;
	bpf_probe_read_kernel_str(key.name, sizeof(key.name), BPF_CORE_READ(s, name));
	active = TPKIT_ACTIVE_MAP(counts);
	c = active ? tpkit_lookup_or_zero(active, &key, &zero_counts, &tpkit_missed) : NULL;
	if (!c)
		return 0;
	/* Plain adds: a raw tracepoint's program never runs twice at once on one CPU (the kernel
	 * skips a nested run and counts it), and the value is this CPU's. */
	c->allocs++;
	c->bytes += BPF_CORE_READ(s, size);
	return 0;
}
