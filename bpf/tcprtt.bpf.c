/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TCP's smoothed round-trip time as log2 histograms: one sample per segment an established
 * socket receives, from the raw tcp:tcp_probe tracepoint at the top of tcp_rcv_established()
 * (where bcc's tcprtt puts a kprobe), its socket read with CO-RE. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/inet.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/tp/tcp_probe_raw.h>
#include <tpkit/tools/tcprtt.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

const volatile bool split_local = false;
const volatile bool split_remote = false;
const volatile bool milliseconds = false;
/* -a and -A: the address the local (remote) one must be, and its family; family 0: any. */
const volatile __u16 target_laddr_family = 0;
const volatile __u8 target_laddr[16] = {};
const volatile __u16 target_raddr_family = 0;
const volatile __u8 target_raddr[16] = {};

TPKIT_SWAPPED_HALF(hists, BPF_MAP_TYPE_PERCPU_HASH, struct tcprtt_key, struct tcprtt_value)
	hists_a SEC(".maps"), hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(hists) hists SEC(".maps");
TPKIT_ZERO_VALUE(struct tcprtt_value) empty_value SEC(".maps");

static __always_inline bool address_matches(__u16 family, const __u8 *address, __u16 target_family,
					    const volatile __u8 *target)
{
	const int length = family == AF_INET ? 4 : 16;

	if (family != target_family)
		return false;
#pragma unroll
	for (int i = 0; i < 16; i++)
		if (i < length && address[i] != target[i])
			return false;
	return true;
}

/* Whether the sample's key needs the socket's addresses and ports: without filters or splits
 * (rodata, known at load) the verifier drops every read of them. */
static __always_inline bool tuple_needed(void)
{
	return split_local || split_remote || target_laddr_family || target_raddr_family ||
	       tpkit_target_family || tpkit_target_lports[0] || tpkit_target_rports[0];
}

SEC("raw_tp/tcp_probe")
int segment_received(struct bpf_raw_tracepoint_args *ctx)
{
	struct sock *sk = tpkit_tcp_probe_raw_sk(ctx);
	struct tcprtt_key key = {};
	struct tcprtt_value *value;
	__u64 srtt;
	void *active;

	if (tuple_needed()) {
		struct tpkit_inet_tuple t = {};

		tpkit_read_inet_tuple(sk, &t);
		if (!tpkit_inet_selected(&t))
			return 0;
		if (target_laddr_family &&
		    !address_matches(t.family, t.saddr, target_laddr_family, target_laddr))
			return 0;
		if (target_raddr_family &&
		    !address_matches(t.family, t.daddr, target_raddr_family, target_raddr))
			return 0;
		if (split_local || split_remote) {
			key.family = t.family;
			__builtin_memcpy(key.addr, split_local ? t.saddr : t.daddr, sizeof(key.addr));
		}
	}

	/* srtt_us holds 8 times the smoothed RTT in microseconds; tcp_probe's record shows
	 * srtt_us >> 3 too. */
	srtt = BPF_CORE_READ((struct tcp_sock *)sk, srtt_us) >> 3;
	if (milliseconds)
		srtt /= 1000;
	active = TPKIT_ACTIVE_MAP(hists);
	if (!active)
		return 0;
	value = tpkit_lookup_or_zero(active, &key, &empty_value, &tpkit_missed);
	if (!value)
		return 0;
	tpkit_log2_hist_add(&value->hist, srtt);
	value->total += srtt;
	return 0;
}
