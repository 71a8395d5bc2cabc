// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// cpudist's collector: its options and how it opens.
#pragma once

#include "collectors/task_hists.hpp"

#include <memory>

namespace tpkit::cpudist {

struct Options : task_hists::Options {
    bool off_cpu = false; // -O: from switched out to in
};

void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::cpudist
