/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A log2 histogram of received packet lengths, from net:netif_receive_skb or net:netif_rx
 * (one event class, net_dev_template); the tracepoint is chosen at run time. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>
#include "netdev.bpf.h"
#include <tpkit/tools/netrxlen.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/net.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

TPKIT_SWAPPED_HALF(hists, BPF_MAP_TYPE_PERCPU_HASH, struct netrxlen_key, struct tpkit_log2_hist)
	hists_a SEC(".maps"), hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(hists) hists SEC(".maps");
TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_hist SEC(".maps");

static __always_inline bool device_selected(void *ctx)
{
	struct sk_buff *skb;

	if (!target_ifindex)
		return true;
	skb = (struct sk_buff *)tpkit_netif_receive_skb_skbaddr(ctx);
	return net_device_selected(BPF_CORE_READ(skb, dev));
}

SEC("tracepoint")
int packet_received(void *ctx)
{
	struct netrxlen_key key = {};
	struct tpkit_log2_hist *hist;
	void *active;

	if (!tpkit_current_selected() || !device_selected(ctx))
		return 0;
	if (per_dev)
		tpkit_netif_receive_skb_name(ctx, key.dev, sizeof(key.dev));
	active = TPKIT_ACTIVE_MAP(hists);
	if (!active)
		return 0;
	hist = tpkit_lookup_or_zero(active, &key, &empty_hist, &tpkit_missed);
	if (hist)
		tpkit_log2_hist_add(hist, tpkit_netif_receive_skb_len(ctx));
	return 0;
}
