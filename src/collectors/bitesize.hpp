// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// bitesize's collector: its options and how it opens.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::bitesize {

// Process names the histogram map holds per interval.
inline constexpr std::uint32_t max_names = 10240;

struct Options {
    std::string disk;
};

// -d (after the common options).
void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::bitesize
