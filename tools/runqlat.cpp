// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// runqlat: run-queue (scheduler) latency as a histogram, counted in the kernel; bcc's runqlat.
#include "collectors/runqlat.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  runqlat                   # run-queue latency histogram, at Ctrl-C
  runqlat 1 10              # print every second, ten times
  runqlat -mT 1             # every second, in milliseconds, with the time
  runqlat -P                # one histogram per process
  runqlat -p 185            # only the waits of process 185
  runqlat --json -d 10      # after 10 seconds, the histogram as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("runqlat",
                   "Summarize run-queue (scheduler) latency as a histogram: how long tasks wait "
                   "runnable, from being woken or preempted until they run.\n-p, -t, -u, --cgroup "
                   "and --comm select the task that waits, not the one that wakes it.",
                   examples);
    tpkit::runqlat::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::runqlat::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::runqlat::open(cli, options));
    });
}
