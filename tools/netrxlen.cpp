// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// netrxlen: a histogram of received packet lengths, counted in the kernel.
#include "collectors/netrxlen.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  netrxlen                  # histogram of every received packet's length, at Ctrl-C
  netrxlen 1 5              # print every second, five times
  netrxlen --dev eth0       # only packets received on eth0 (in this network namespace)
  netrxlen --per-dev        # one histogram per device
  netrxlen --event netif_rx # count at netif_rx instead of netif_receive_skb
  netrxlen --json -d 10     # after 10 seconds, the histogram as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("netrxlen", "Histogram of received packet lengths, in the kernel.", examples);
    tpkit::netrxlen::Options options;
    // Packets are received in softirq, in whichever task it interrupts: no task filters.
    cli.add_cpu_filter();
    cli.add_run_options();
    cli.add_interval_count();
    tpkit::netrxlen::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::netrxlen::open(cli, options));
    });
}
