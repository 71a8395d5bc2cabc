// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// cpudist: how long tasks run on a CPU each time (or, -O, stay off it), as a histogram counted in
// the kernel; bcc's cpudist.
#include "cpudist.skel.h"
#include "task_hists.hpp"

#include <fmt/core.h>

#include <fstream>
#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  cpudist                   # on-CPU time histogram, at Ctrl-C
  cpudist -O                # off-CPU time histogram
  cpudist 1 10              # print every second, ten times
  cpudist -mT 1             # every second, in milliseconds, with the time
  cpudist -P                # one histogram per process
  cpudist -p 185            # only process 185
)";

// The most threads that can exist at once: each may be off the CPU.
std::uint32_t pid_max()
{
    std::ifstream file("/proc/sys/kernel/pid_max");
    std::uint32_t max = 0;
    if (!(file >> max) || max == 0)
        throw tpkit::Error(tpkit::Exit::failure, "cannot read /proc/sys/kernel/pid_max");
    return max;
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("cpudist",
                   "Summarize how long tasks run on a CPU each time they are switched in (with -O: "
                   "how long they stay off it), as a histogram. A CPU's idle time is left out.",
                   examples);
    tpkit::task_hists::Options options;
    bool off_cpu = false;
    cli.add_common();
    cli.add_interval_count();
    cli.flag("-O,--offcpu", off_cpu, "off-CPU time instead: from switched out to in");
    tpkit::task_hists::add_options(cli, options, false);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        // On the CPU, one start per CPU is in use at a time; off it, one per sleeping thread.
        const std::uint32_t starts = off_cpu ? pid_max() : TPKIT_TIMING_MAX_ENTRIES;
        auto collector = tpkit::task_hists::open<cpudist_bpf>(
            cli, options, off_cpu ? "off-CPU time" : "on-CPU time",
            fmt::format("more than {} threads {} the CPU at once", starts, off_cpu ? "off" : "on"),
            [&](cpudist_bpf& skel) {
                skel.rodata->off_cpu = off_cpu;
                tpkit::check_libbpf(bpf_map__set_max_entries(skel.maps.switched_at, starts),
                                    "cannot size switched_at");
            });
        tpkit::run_collector(cli.options(), *collector);
    });
}
