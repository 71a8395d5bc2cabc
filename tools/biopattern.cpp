// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biopattern: how much block I/O is random or sequential, per disk; bcc's biopattern.
#include "collectors/biopattern.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  biopattern                # random and sequential I/O per disk, at Ctrl-C
  biopattern 1 10           # print every second, ten times
  biopattern -T 1           # every second, with the time
  biopattern -d sda 1       # only sda, every second
  biopattern --json --duration 10  # after 10 seconds, as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("biopattern",
                   "Show how much block device I/O is random or sequential, per disk: a completed "
                   "request is sequential when it begins where the disk's previous one ended (a "
                   "disk's first completion has nothing to follow and is not counted).\n-p, -t, -u, "
                   "--cgroup and --comm select the task current at the completion, which is seldom "
                   "the one that submitted the I/O.",
                   examples);
    tpkit::biopattern::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::biopattern::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::biopattern::open(cli, options));
    });
}
