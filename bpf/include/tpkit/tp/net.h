/* net:netif_receive_skb / net:netif_rx context (event class net_dev_template). */
#ifndef TPKIT_TP_NET_H
#define TPKIT_TP_NET_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct trace_event_raw_net_dev_template___tpkit {
	struct trace_entry ent;
	void *skbaddr;
	unsigned int len;
	__u32 __data_loc_name;
} __attribute__((preserve_access_index));

static __always_inline void *tpkit_netif_receive_skb_skbaddr(void *ctx)
{
	return BPF_CORE_READ((struct trace_event_raw_net_dev_template___tpkit *)ctx, skbaddr);
}

static __always_inline unsigned int tpkit_netif_receive_skb_len(void *ctx)
{
	return BPF_CORE_READ((struct trace_event_raw_net_dev_template___tpkit *)ctx, len);
}

static __always_inline long tpkit_netif_receive_skb_name(void *ctx, char *dst, __u32 size)
{
	__u32 loc = BPF_CORE_READ((struct trace_event_raw_net_dev_template___tpkit *)ctx,
				  __data_loc_name);

	return bpf_probe_read_kernel_str(dst, size, (char *)ctx + (loc & 0xFFFF));
}

#endif
