// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// netrxlen: a histogram of received packet lengths, counted in the kernel.
#include "netrxlen.h"
#include "netrxlen.skel.h"

#include "net_hists.hpp"

#include <tpkit/tracefs.hpp>

#include <fmt/core.h>

namespace {

constexpr const char* examples = R"(  netrxlen                  # histogram of every received packet's length, at Ctrl-C
  netrxlen 1 5              # print every second, five times
  netrxlen --dev eth0       # only packets received on eth0 (in this network namespace)
  netrxlen --per-dev        # one histogram per device
  netrxlen --event netif_rx # count at netif_rx instead of netif_receive_skb
  netrxlen --json -d 10     # after 10 seconds, the histogram as JSON
)";

struct Options {
    std::string event = "netif_receive_skb";
    tpkit::net_hists::Options net;
};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("netrxlen", "Histogram of received packet lengths, in the kernel.", examples);
    Options options;
    cli.add_common();
    cli.add_interval_count();
    cli.app().add_option("--event", options.event,
                         "netif_receive_skb (default) or netif_rx");
    tpkit::net_hists::add_options(cli, options.net, "packets received");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        if (options.event.rfind("net:", 0) == 0)
            options.event.erase(0, 4);
        if (options.event != "netif_receive_skb" && options.event != "netif_rx")
            throw tpkit::Error(tpkit::Exit::unknown_target,
                               fmt::format("unknown event '{}': netrxlen counts at "
                                           "netif_receive_skb or netif_rx", options.event));
        auto skel = tpkit::Skeleton<netrxlen_bpf>::open("netrxlen");
        tpkit::net_hists::select_device(*skel, options.net);
        tpkit::tracefs_root();
        tpkit::apply_task_filters(*skel, cli.options());

        const tpkit::net_hists::Describe<netrxlen_key> describe{
            "received packet lengths", [&](const netrxlen_key& key) {
                std::vector<tpkit::Label> labels{{"event", "net:" + options.event}};
                if (options.net.per_dev)
                    labels.push_back({"dev", std::string(tpkit::text_of(key.dev))});
                return labels;
            }};
        tpkit::Link link{nullptr, bpf_link__destroy};
        tpkit::net_hists::run<netrxlen_bpf, netrxlen_key>(
            cli, skel, options.net.per_dev, describe, [&](auto& loaded) {
                link = tpkit::attach_tracepoint(loaded->progs.packet_received, "net",
                                                options.event);
            });
    });
}
