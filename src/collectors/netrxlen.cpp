// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/netrxlen.hpp"

#include <tpkit/tools/netrxlen.h>
#include "netrxlen.skel.h"

#include <fmt/core.h>

namespace tpkit::netrxlen {

void add_options(Cli& cli, Options& options)
{
    cli.option("--event", options.event, "netif_receive_skb (default) or netif_rx");
    net_hists::add_options(cli, options.net, "packets received");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    std::string event = options.event;
    if (event.rfind("net:", 0) == 0)
        event.erase(0, 4);
    if (event != "netif_receive_skb" && event != "netif_rx")
        throw Error(Exit::unknown_target,
                    fmt::format("unknown event '{}': netrxlen counts at netif_receive_skb or "
                                "netif_rx", event));
    const CommonOptions& common = cli.options();
    if (common.pid || common.tid || common.uid || !common.cgroup.empty() || !common.comm.empty())
        throw Error(Exit::usage, "netrxlen has no task filters: packets are received in softirq, "
                                 "in whichever task it interrupts");
    auto skel = Skeleton<netrxlen_bpf>::open(cli.name());
    net_hists::select_device(*skel, options.net);
    apply_task_filters(*skel, cli.options());

    net_hists::Describe<netrxlen_key> describe{
        "received packet lengths", [event, per_dev = options.net.per_dev](const netrxlen_key& key) {
            std::vector<Label> labels{{"event", "net:" + event}};
            if (per_dev)
                labels.push_back({"dev", std::string(text_of(key.dev))});
            return labels;
        }};
    return std::make_unique<net_hists::Collector<netrxlen_bpf, netrxlen_key>>(
        std::move(skel), options.net.per_dev, std::move(describe), [&](auto& loaded) {
            return attach_tracepoint(loaded->progs.packet_received, "net", event);
        });
}

} // namespace tpkit::netrxlen
