// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// wqlat: workqueue queueing latency, from queueing a work item to a worker starting it, as one
// log2 histogram per work function, counted in the kernel.
#include "collectors/wqlat.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  wqlat                     # queueing latency per work function, at Ctrl-C
  wqlat 1 10                # print every second, ten times
  wqlat -m                  # in milliseconds
  wqlat -w vmstat_update    # only work items running vmstat_update
  wqlat -p 185              # only work queued by process 185
  wqlat --json -d 10        # after 10 seconds, the histograms as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("wqlat",
                   "Summarize workqueue queueing latency per work function: how long work items "
                   "wait from being queued until a worker starts them.\n-p, -t, -u, --cgroup and "
                   "--comm select the task that queues the work.",
                   examples);
    tpkit::wqlat::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::wqlat::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::wqlat::open(cli, options));
    });
}
