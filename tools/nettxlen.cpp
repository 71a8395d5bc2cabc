// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// nettxlen: a histogram of transmitted packet lengths, counted in the kernel; netrxlen's mirror.
#include "collectors/nettxlen.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  nettxlen                  # histogram of every transmitted packet's length, at Ctrl-C
  nettxlen 1 5              # print every second, five times
  nettxlen --dev eth0       # only packets sent on eth0 (in this network namespace)
  nettxlen --per-dev        # one histogram per device
  nettxlen --per-rc         # one histogram per driver return code (0: sent, 16: busy)
  nettxlen --json -d 10     # after 10 seconds, the histogram as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("nettxlen",
                   "Histogram of transmitted packet lengths (net:net_dev_xmit: the length the "
                   "driver was handed, link-layer header included), in the kernel.",
                   examples);
    tpkit::nettxlen::Options options;
    cli.add_common();
    cli.keep_own_process();
    cli.add_interval_count();
    tpkit::nettxlen::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::nettxlen::open(cli, options));
    });
}
