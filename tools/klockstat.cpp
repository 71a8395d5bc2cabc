// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// klockstat: kernel lock contention by caller, from lock:contention_begin to contention_end.
#include "collectors/klockstat.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  klockstat                     # lock waits by caller, until Ctrl-C
  klockstat -d 5                # for 5 seconds
  klockstat -i 5                # print every 5 seconds (since the start; -R: each interval)
  klockstat -p 181              # only waits of process 181
  klockstat -t 181              # only waits of thread 181
  klockstat -c pipe_            # only callers whose name starts with pipe_
  klockstat -L cgroup_mutex     # only the lock cgroup_mutex (an address too: -L 0xffff...)
  klockstat --by-lock           # by caller and lock address
  klockstat -S acq_count        # the most waits first
  klockstat -n 3 -s 6           # the first 3 callers, 6 frames each
  klockstat -P                  # by thread
  klockstat --json -d 5         # one JSON object per caller
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("klockstat",
                   "Summarize kernel lock contention (mutexes, rwsems, spinlocks, rwlocks...) by "
                   "the caller that waited: count, average, longest and total wait, from "
                   "lock:contention_begin to contention_end.\nHold times are not shown: no "
                   "tracepoint marks a lock's release.",
                   examples);
    tpkit::klockstat::Options options;
    cli.add_common();
    cli.add_interval_option();
    tpkit::klockstat::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::klockstat::open(cli, options));
    });
}
