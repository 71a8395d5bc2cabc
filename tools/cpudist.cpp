// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// cpudist: how long tasks run on a CPU each time (or, -O, stay off it), as a histogram counted in
// the kernel; bcc's cpudist.
#include "collectors/cpudist.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  cpudist                   # on-CPU time histogram, at Ctrl-C
  cpudist -O                # off-CPU time histogram
  cpudist 1 10              # print every second, ten times
  cpudist -mT 1             # every second, in milliseconds, with the time
  cpudist -P                # one histogram per process
  cpudist -p 185            # only process 185
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("cpudist",
                   "Summarize how long tasks run on a CPU each time they are switched in (with -O: "
                   "how long they stay off it), as a histogram. A CPU's idle time is left out.",
                   examples);
    tpkit::cpudist::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::cpudist::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::cpudist::open(cli, options));
    });
}
