// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biotop: the processes doing the most block I/O, every interval; bcc's biotop.
#include "collectors/biotop.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  biotop                    # top processes by block I/O, every second
  biotop 5 10               # every 5 seconds, ten times
  biotop -C -r 5            # the top 5, without clearing the screen
  biotop -s bytes           # sorted by bytes (io, bytes, time; all: their sum, as bcc)
  biotop -p 185 -d sda      # only I/O submitted by process 185, to sda
  biotop --json 1 3         # as JSON, one object per row
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("biotop",
                   "Show the processes doing the most block device I/O, every INTERVAL seconds (1 "
                   "by default): per process, disk and direction (D: R or W) the requests "
                   "completed (I/O), their kilobytes and their average time at the device.\n-p, "
                   "-t, -u, --cgroup and --comm select the task that submitted the I/O.",
                   examples);
    tpkit::biotop::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::biotop::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        // Every second unless told.
        tpkit::CommonOptions common = cli.options();
        if (common.interval <= 0)
            common.interval = 1;
        tpkit::run_collector(common, *tpkit::biotop::open(cli, options));
    });
}
