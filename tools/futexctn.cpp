// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// futexctn: futex contention, how long threads wait in FUTEX_WAIT until woken, as log2
// histograms per futex word and thread (or process) and user stack, counted in the kernel.
#include "collectors/futexctn.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  futexctn                  # contended waits per lock, thread and stack, at Ctrl-C
  futexctn 1 10             # print every second, ten times
  futexctn -mT 1            # every second, in milliseconds, with the time
  futexctn -s 1             # every second, per process, without stacks
  futexctn -l 0x8187bb8     # only the futex word at 0x8187bb8
  futexctn -p 123           # only process 123
  futexctn -t 125           # only thread 125
  futexctn --json -s -d 10  # after 10 seconds, the histograms as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("futexctn",
                   "Summarize futex contention: how long threads wait in FUTEX_WAIT until woken, "
                   "per futex word (its address in the process), thread and user stack, or per "
                   "process with -s.\nA wait that returns an error (the word had changed: EAGAIN; "
                   "a timeout; a signal) is not counted.",
                   examples);
    tpkit::futexctn::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::futexctn::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::futexctn::open(cli, options));
    });
}
