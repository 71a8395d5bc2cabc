// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// runqlat's collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include "runqlat.skel.h"
#include "task_hists.hpp"

#include <fmt/core.h>

namespace tpkit::runqlat {

using Options = task_hists::Options;

inline void add_options(Cli& cli, Options& options)
{
    task_hists::add_options(cli, options, true);
}

inline std::unique_ptr<Collector> open(const Cli& cli, const Options& options)
{
    return task_hists::open<runqlat_bpf>(
        cli, options, "run-queue latency",
        fmt::format("more than {} threads runnable at once", TPKIT_TIMING_MAX_ENTRIES),
        [](runqlat_bpf&) {});
}

} // namespace tpkit::runqlat
