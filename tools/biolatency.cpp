// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biolatency: block I/O latency as a histogram, counted in the kernel; bcc's biolatency.
#include "collectors/biolatency.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  biolatency                # block I/O latency histogram, at Ctrl-C
  biolatency 1 10           # print every second, ten times
  biolatency -mT 1          # every second, in milliseconds, with the time
  biolatency -Q             # include the time queued in the kernel
  biolatency -D             # one histogram per disk
  biolatency -F             # one histogram per operation and flags
  biolatency -d sda         # only I/O to sda
  biolatency --json -d sda --duration 10  # after 10 seconds, sda's histogram as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("biolatency",
                   "Summarize block device I/O latency as a histogram: from issue to the device "
                   "(with -Q from being queued) to completion.\n-p, -t, -u, --cgroup and --comm "
                   "select the task current when a request is issued (or queued).",
                   examples);
    tpkit::biolatency::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::biolatency::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::biolatency::open(cli, options));
    });
}
