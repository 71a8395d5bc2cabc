// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tplat: the latency between two tracepoints, as an in-kernel histogram, no compiler needed.
#include "collectors/tplat.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  tplat syscalls:sys_enter_nanosleep syscalls:sys_exit_nanosleep     # by thread, usecs
  tplat sched:sched_wakeup sched:sched_switch --match 'pid==next_pid' --unit ns
  tplat block:block_rq_issue block:block_rq_complete --match sector --unit ms 1 5
  tplat block:block_rq_issue block:block_rq_complete \
        --match 'block_rq_issue.sector==block_rq_complete.sector' --by comm
  tplat syscalls:sys_enter_read syscalls:sys_exit_read --start-filter 'fd == 0' \
        --end-filter 'ret > 0' --linear 0,100,10 --json -d 10
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tplat", "Latency between two tracepoints, as in-kernel histograms.", examples);
    tpkit::tplat::Options options;
    tpkit::tplat::add_options(cli, options);
    cli.add_common();
    cli.add_map_memory();
    cli.add_interval_option();
    cli.add_interval_count();
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::tplat::open(cli, options));
    });
}
