// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// syscount's collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::syscount {

// Processes each half of the by-process map holds: those seen in an interval.
inline constexpr std::uint32_t max_processes = 10240;

struct Options {
    std::size_t top = 10;
    double interval = 0;
    bool failures = false;
    std::string errno_text;
    std::string syscall_text;
    bool latency = false;
    bool milliseconds = false;
    bool by_process = false;
    bool list = false;
};

// What selects and splits the counts: -x, -e, --syscall, -L, -m, -P.
void add_options(Cli& cli, Options& options);
// Each collect gives the counts (and times) since the previous one, largest first, the top ones.
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::syscount
