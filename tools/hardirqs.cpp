// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// hardirqs: time in (or count of) hard IRQ handlers per name, counted in the kernel; bcc's
// hardirqs.
#include "collectors/hardirqs.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  hardirqs                  # total time in each IRQ handler, at Ctrl-C
  hardirqs --count 1        # how many of each, every second
  hardirqs -d               # histograms of their times, per handler
  hardirqs -s 1             # only on CPU 1
  hardirqs -NT 1 10         # every second, ten times, in nanoseconds, with the time
  hardirqs --json --duration 5
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("hardirqs",
                   "Summarize hard IRQ handler time, or counts, per handler name "
                   "(irq:irq_handler_entry and irq_handler_exit; the names of /proc/interrupts). "
                   "-p, -t, -u, --cgroup and --comm select the task an IRQ interrupted.",
                   examples);
    tpkit::hardirqs::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::hardirqs::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::hardirqs::open(cli, options));
    });
}
