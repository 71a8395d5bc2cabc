// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// bitesize: block I/O sizes as histograms by process name, counted in the kernel; bcc's bitesize.
#include "collectors/bitesize.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  bitesize                  # I/O size histograms by process name, at Ctrl-C
  bitesize 1 10             # print every second, ten times
  bitesize -c postgres      # only I/O submitted by tasks named postgres
  bitesize -d sda           # only I/O to sda
  bitesize --json --duration 10  # after 10 seconds, as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("bitesize",
                   "Summarize block device I/O sizes (kilobytes) as histograms by the name of the "
                   "process that submitted the I/O, counted as each request is issued.\n-p, -u, "
                   "--tid, --cgroup and -c (--comm) select the submitting task.",
                   examples);
    tpkit::bitesize::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::bitesize::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::bitesize::open(cli, options));
    });
}
