// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biolatency's collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::biolatency {

// Keys of the split histograms: disks times operations and flags.
inline constexpr std::uint32_t max_keys = 1024;

struct Options {
    std::string disk;
    bool queued = false;
    bool per_disk = false;
    bool per_flags = false;
    bool milliseconds = false;
};

// -d (after the common options), -Q, -D, -F, -m.
void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::biolatency
