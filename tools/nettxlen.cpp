// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// nettxlen: a histogram of transmitted packet lengths, counted in the kernel; netrxlen's mirror.
#include "nettxlen.h"
#include "nettxlen.skel.h"

#include "net_hists.hpp"
#include "tpkit/run/tool.hpp"

namespace {

constexpr const char* examples = R"(  nettxlen                  # histogram of every transmitted packet's length, at Ctrl-C
  nettxlen 1 5              # print every second, five times
  nettxlen --dev eth0       # only packets sent on eth0 (in this network namespace)
  nettxlen --per-dev        # one histogram per device
  nettxlen --per-rc         # one histogram per driver return code (0: sent, 16: busy)
  nettxlen --json -d 10     # after 10 seconds, the histogram as JSON
)";

struct Options {
    tpkit::net_hists::Options net;
    bool per_rc = false;
};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("nettxlen",
                   "Histogram of transmitted packet lengths (net:net_dev_xmit: the length the "
                   "driver was handed, link-layer header included), in the kernel.",
                   examples);
    Options options;
    cli.add_common();
    cli.keep_own_process();
    cli.add_interval_count();
    tpkit::net_hists::add_options(cli, options.net, "packets sent");
    cli.flag("--per-rc", options.per_rc,
             "one histogram per return code of the driver (NETDEV_TX_OK 0, "
             "NETDEV_TX_BUSY 16, or an error)");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        auto skel = tpkit::Skeleton<nettxlen_bpf>::open("nettxlen");
        tpkit::net_hists::select_device(*skel, options.net);
        tpkit::apply_task_filters(*skel, cli.options());
        skel->rodata->per_rc = options.per_rc;

        const tpkit::net_hists::Describe<nettxlen_key> describe{
            "transmitted packet lengths", [&](const nettxlen_key& key) {
                std::vector<tpkit::Label> labels{{"event", "net:net_dev_xmit"}};
                if (options.net.per_dev)
                    labels.push_back({"dev", std::string(tpkit::text_of(key.dev))});
                if (options.per_rc)
                    labels.push_back({"rc", std::to_string(key.rc), true});
                return labels;
            }};
        auto collector = tpkit::net_hists::open<nettxlen_bpf, nettxlen_key>(
            cli, std::move(skel), options.net.per_dev || options.per_rc, describe,
            [](auto& loaded) {
                loaded.attach();
                return tpkit::Link{nullptr, bpf_link__destroy};
            });
        tpkit::run_collector(cli.options(), *collector);
    });
}
