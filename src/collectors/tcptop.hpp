// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcptop's collector: its options and how it opens.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/inet.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::tcptop {

// Connections (per process) the map holds in an interval, as libbpf-tools' tcptop.
inline constexpr std::uint32_t max_keys = 10240;

struct Options {
    InetFilter filter; // -4, -6
    bool no_clear = false;
    bool no_summary = false;
    std::size_t rows = 20;
    std::string sort = "all";
};

// -4, -6, -C, -S, -r, -s.
void add_options(Cli& cli, Options& options);
// Each print is the connections that moved the most bytes since the previous one: in text
// libbpf-tools' IPv4 table, then the IPv6 one, under the time and load average (unless -S),
// the screen cleared first on a terminal (unless -C). Exit 4 where the kernel has no
// sock:sock_send_length (before 6.3).
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::tcptop
