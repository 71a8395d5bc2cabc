// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biopattern's collector: its options and how it opens.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::biopattern {

// Disks the counts' map holds.
inline constexpr std::uint32_t max_disks = 1024;

struct Options {
    std::string disk;
};

// -d (after the common options).
void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::biopattern
