// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// netrxlen's collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include "netrxlen.h"
#include "netrxlen.skel.h"

#include "net_hists.hpp"


#include <fmt/core.h>

namespace tpkit::netrxlen {

struct Options {
    std::string event = "netif_receive_skb";
    net_hists::Options net;
};

inline void add_options(Cli& cli, Options& options)
{
    cli.option("--event", options.event, "netif_receive_skb (default) or netif_rx");
    net_hists::add_options(cli, options.net, "packets received");
}

inline std::unique_ptr<Collector> open(const Cli& cli, Options options)
{
    if (options.event.rfind("net:", 0) == 0)
        options.event.erase(0, 4);
    if (options.event != "netif_receive_skb" && options.event != "netif_rx")
        throw Error(Exit::unknown_target,
                    fmt::format("unknown event '{}': netrxlen counts at netif_receive_skb or "
                                "netif_rx", options.event));
    const CommonOptions& common = cli.options();
    if (common.pid || common.tid || common.uid || !common.cgroup.empty() || !common.comm.empty())
        throw Error(Exit::usage, "netrxlen has no task filters: packets are received in softirq, "
                                 "in whichever task it interrupts");
    auto skel = Skeleton<netrxlen_bpf>::open(cli.name());
    net_hists::select_device(*skel, options.net);
    apply_task_filters(*skel, cli.options());

    const net_hists::Describe<netrxlen_key> describe{
        "received packet lengths", [options](const netrxlen_key& key) {
            std::vector<Label> labels{{"event", "net:" + options.event}};
            if (options.net.per_dev)
                labels.push_back({"dev", std::string(text_of(key.dev))});
            return labels;
        }};
    return net_hists::open<netrxlen_bpf, netrxlen_key>(
        cli, std::move(skel), options.net.per_dev, describe, [&](auto& loaded) {
            return attach_tracepoint(loaded->progs.packet_received, "net", options.event);
        });
}

} // namespace tpkit::netrxlen
