// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// nettxlen's collector: its options and how it opens.
#pragma once

#include "collectors/net_hists.hpp"

#include <memory>

namespace tpkit::nettxlen {

struct Options {
    net_hists::Options net;
    bool per_rc = false;
};

// --dev, --per-dev, --per-rc.
void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::nettxlen
