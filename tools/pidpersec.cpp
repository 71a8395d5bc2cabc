// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// pidpersec: new tasks (processes and threads) counted in the kernel, every second; bcc's
// pidpersec.
#include "collectors/pidpersec.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  pidpersec                 # new tasks every second, until Ctrl-C
  pidpersec -d 10           # for 10 seconds
  pidpersec -p 181          # only tasks created by process 181
  pidpersec --json          # a count line every second, processes and threads apart
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("pidpersec",
                   "Count the new tasks, each with a PID of its own (processes and threads), "
                   "every second.\n-p, -t, -u, --cgroup and --comm select the creating task.",
                   examples);
    tpkit::pidpersec::Options options;
    cli.add_common();
    tpkit::pidpersec::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        // Every second, as bcc's.
        tpkit::CommonOptions common = cli.options();
        common.interval = 1;
        tpkit::run_collector(common, *tpkit::pidpersec::open(cli, options));
    });
}
