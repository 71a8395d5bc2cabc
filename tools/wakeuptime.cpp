// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// wakeuptime: time threads spend blocked, by the thread that woke them and its kernel stack.
#include "collectors/wakeuptime.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  wakeuptime                # blocked time by waker stack, until Ctrl-C
  wakeuptime 5              # for 5 seconds
  wakeuptime -f 5 > folded  # folded stacks, for flamegraph.pl
  wakeuptime -u             # only user threads blocking (no kernel threads)
  wakeuptime -p 185         # only threads of process 185 blocking
  wakeuptime -m 1000        # only blocks of more than 1000 us
  wakeuptime -M 10000       # only blocks of less than 10000 us
  wakeuptime --json -d 5    # one JSON object per waker, target and stack
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("wakeuptime",
                   "Summarize the time threads spend blocked by the thread that woke them, its "
                   "kernel stack and the woken thread's name: from going to sleep to the wake-up "
                   "(run-queue latency after it is not included).",
                   examples);
    tpkit::wakeuptime::Options options;
    cli.add_common();
    tpkit::wakeuptime::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::CommonOptions common = cli.options();
        if (options.duration)
            common.duration = *options.duration;
        tpkit::run_collector(common, *tpkit::wakeuptime::open(cli, options));
    });
}
