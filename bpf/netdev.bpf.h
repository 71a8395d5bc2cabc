/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What netrxlen and nettxlen share in the kernel: --dev's device, chosen in user space by its
 * index and network namespace (a name means something only inside a namespace). */
#ifndef TPKIT_NETDEV_BPF_H
#define TPKIT_NETDEV_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

const volatile __u32 target_ifindex = 0; /* 0: every device */
const volatile __u32 target_netns = 0;
const volatile bool per_dev = false;

static __always_inline bool net_device_selected(struct net_device *dev)
{
	if (!target_ifindex)
		return true;
	return BPF_CORE_READ(dev, ifindex) == target_ifindex &&
	       BPF_CORE_READ(dev, nd_net.net, ns.inum) == target_netns;
}

#endif
