// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// bitesize's collector: its options and how it opens.
#pragma once

#include "collectors/disk_filter.hpp"

#include <tpkit/run/collector.hpp>

#include <memory>

namespace tpkit::bitesize {

using Options = disk_filter::Options;

// -d (after the common options).
void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::bitesize
