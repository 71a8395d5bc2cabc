// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// hardirqs' collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include "collectors/irq_tables.hpp"

#include <memory>

namespace tpkit::hardirqs {

using Options = irq_tables::Options;

// --count, -d, -N.
void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::hardirqs
