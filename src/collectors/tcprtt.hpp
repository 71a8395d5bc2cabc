// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcprtt's collector: its options and how it opens.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/inet.hpp>

#include <cstdint>
#include <memory>

namespace tpkit::tcprtt {

// Addresses of the split histograms in an interval.
inline constexpr std::uint32_t max_keys = 1024;

struct Options {
    InetFilter filter;
    InetAddress local_address;
    InetAddress remote_address;
    bool split_local = false;
    bool split_remote = false;
    bool averages = false;
    bool milliseconds = false;
};

// -4/-6, -p, -P, -a, -A, -b, -B, -e, -m.
void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::tcprtt
