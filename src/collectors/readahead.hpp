// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// readahead's collector: its options and how it opens.
#pragma once

#include <tpkit/run/collector.hpp>

#include <memory>

namespace tpkit::readahead {

struct Options {
    bool per_device = false; // --per-device: histograms per device (the file's superblock's)
    bool per_file = false;   // --per-file: per device and inode
};

void add_options(Cli& cli, Options& options);
// Error(unknown_target) where the kernel has no readahead tracepoints (6.12 and older).
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::readahead
