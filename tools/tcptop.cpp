// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcptop: the TCP connections moving the most bytes, every interval; bcc's tcptop.
#include "collectors/tcptop.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  tcptop                    # top connections by bytes, every second
  tcptop 5 10               # every 5 seconds, ten times
  tcptop -C -S -r 5         # the top 5, without clearing the screen or the load line
  tcptop -s sent            # sorted by bytes sent (all, sent, received)
  tcptop -p 181 -4          # only process 181's IPv4 connections
  tcptop -c /sys/fs/cgroup/unified/web   # only tasks in that cgroup
  tcptop --json 1 3         # as JSON, one object per connection, in bytes
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tcptop",
                   "Show the TCP connections moving the most bytes, every INTERVAL seconds (1 by "
                   "default): per process and connection the kilobytes received (RX_KB) and sent "
                   "(TX_KB) by its calls to send and receive, IPv4 then IPv6, from the "
                   "sock:sock_send_length and sock:sock_recv_length tracepoints (Linux 6.3 and "
                   "later).\n-p, -t, -u, -c/--cgroup and --comm select the task that sends or "
                   "receives.",
                   examples);
    tpkit::tcptop::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::tcptop::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        // Every second unless told.
        tpkit::CommonOptions common = cli.options();
        if (common.interval <= 0)
            common.interval = 1;
        tpkit::run_collector(common, *tpkit::tcptop::open(cli, options));
    });
}
