/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A log2 histogram of transmitted packet lengths, at net:net_dev_xmit (after the driver took or
 * refused the packet). A raw tracepoint: it runs for every packet sent, and hands over the device
 * itself, which the skb may no longer point to once the driver has it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>
#include "netdev.bpf.h"
#include <tpkit/tools/nettxlen.h>
#include <tpkit/task.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

const volatile bool per_rc = false;

TPKIT_SWAPPED_HALF(hists, BPF_MAP_TYPE_PERCPU_HASH, struct nettxlen_key, struct tpkit_log2_hist)
	hists_a SEC(".maps"), hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(hists) hists SEC(".maps");
TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_hist SEC(".maps");

/* TP_PROTO(struct sk_buff *skb, int rc, struct net_device *dev, unsigned int skb_len) */
SEC("raw_tp/net_dev_xmit")
int packet_sent(struct bpf_raw_tracepoint_args *ctx)
{
	struct net_device *dev = (struct net_device *)ctx->args[2];
	struct nettxlen_key key = {};
	struct tpkit_log2_hist *hist;
	void *active;

	if (!tpkit_current_selected() || !net_device_selected(dev))
		return 0;
	if (per_dev)
		bpf_core_read_str(key.dev, sizeof(key.dev), &dev->name);
	if (per_rc)
		key.rc = (__s32)ctx->args[1];
	active = TPKIT_ACTIVE_MAP(hists);
	if (!active)
		return 0;
	hist = tpkit_lookup_or_zero(active, &key, &empty_hist, &tpkit_missed);
	if (hist)
		tpkit_log2_hist_add(hist, (__u32)ctx->args[3]);
	return 0;
}
