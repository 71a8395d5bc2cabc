// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// netrxlen's collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include "collectors/net_hists.hpp"

#include <memory>
#include <string>

namespace tpkit::netrxlen {

struct Options {
    std::string event = "netif_receive_skb";
    net_hists::Options net;
};

// --event, --dev, --per-dev.
void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::netrxlen
