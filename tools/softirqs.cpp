// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// softirqs: time in (or count of) softirqs per vector, counted in the kernel; bcc's softirqs.
#include "collectors/softirqs.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  softirqs                  # total time in each softirq vector, at Ctrl-C
  softirqs -C 1             # how many of each, every second
  softirqs -d               # histograms of their times, per vector
  softirqs -c 1             # only on CPU 1
  softirqs -NT 1 10         # every second, ten times, in nanoseconds, with the time
  softirqs --json --duration 5
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("softirqs",
                   "Summarize softirq time, or counts, per vector (irq:softirq_entry and "
                   "softirq_exit). -p, -t, -u, --cgroup and --comm select the task a softirq "
                   "interrupted.",
                   examples);
    tpkit::softirqs::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::softirqs::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::softirqs::open(cli, options));
    });
}
