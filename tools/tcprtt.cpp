// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcprtt: TCP's smoothed round-trip time as a histogram, sampled in the kernel at each segment an
// established socket receives; bcc's tcprtt, on the tcp:tcp_probe tracepoint.
#include "collectors/tcprtt.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  tcprtt                    # RTT histogram of all TCP sockets, at Ctrl-C
  tcprtt -i 1 -d 10         # print every second, for ten seconds
  tcprtt -mT 1              # every second, in milliseconds, with the time
  tcprtt -p 443             # only sockets on local port 443
  tcprtt -P 80,443          # only sockets connected to remote port 80 or 443
  tcprtt -a 10.0.0.1        # only sockets on local address 10.0.0.1
  tcprtt -A ::1             # only sockets connected to ::1
  tcprtt -B -e              # one histogram per remote address, with averages
  tcprtt --json -d 10       # after 10 seconds, the histogram as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tcprtt",
                   "Summarize the smoothed round-trip time of TCP sockets as a histogram: one "
                   "sample per segment a socket receives while established.",
                   examples);
    tpkit::tcprtt::Options options;
    cli.add_run_options();
    cli.add_interval_option();
    cli.add_interval_count();
    tpkit::tcprtt::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::tcprtt::open(cli, options));
    });
}
