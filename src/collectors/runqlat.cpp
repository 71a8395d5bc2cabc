// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/runqlat.hpp"

#include "runqlat.skel.h"

#include <fmt/core.h>

namespace tpkit::runqlat {

void add_options(Cli& cli, Options& options)
{
    task_hists::add_options(cli, options, true);
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<task_hists::Collector<runqlat_bpf>>(
        cli, options, "run-queue latency",
        fmt::format("more than {} threads runnable at once", TPKIT_TIMING_MAX_ENTRIES),
        [](runqlat_bpf&) {});
}

} // namespace tpkit::runqlat
