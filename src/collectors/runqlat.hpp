// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// runqlat's collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include "collectors/task_hists.hpp"

#include <memory>

namespace tpkit::runqlat {

using Options = task_hists::Options;

void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::runqlat
