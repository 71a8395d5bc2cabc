// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/cpudist.hpp"

#include "cpudist.skel.h"

#include <fmt/core.h>

#include <fstream>

namespace tpkit::cpudist {
namespace {

// The most threads that can exist at once: each may be off the CPU.
std::uint32_t pid_max()
{
    std::ifstream file("/proc/sys/kernel/pid_max");
    std::uint32_t max = 0;
    if (!(file >> max) || max == 0)
        throw Error(Exit::failure, "cannot read /proc/sys/kernel/pid_max");
    return max;
}

} // namespace

void add_options(Cli& cli, Options& options)
{
    cli.flag("-O,--offcpu", options.off_cpu, "off-CPU time instead: from switched out to in");
    task_hists::add_options(cli, options, false);
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    // On the CPU, one start per CPU is in use at a time; off it, one per sleeping thread.
    const bool off_cpu = options.off_cpu;
    const std::uint32_t starts = off_cpu ? pid_max() : TPKIT_TIMING_MAX_ENTRIES;
    return std::make_unique<task_hists::Collector<cpudist_bpf>>(
        cli, options, off_cpu ? "off-CPU time" : "on-CPU time",
        fmt::format("more than {} threads {} the CPU at once", starts, off_cpu ? "off" : "on"),
        [&](cpudist_bpf& skel) {
            skel.rodata->off_cpu = off_cpu;
            check_libbpf(bpf_map__set_max_entries(skel.maps.switched_at, starts),
                         "cannot size switched_at");
        });
}

} // namespace tpkit::cpudist
