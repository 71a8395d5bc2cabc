// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// netrxlen: a histogram of received packet lengths, counted in the kernel.
#include "netrxlen.h"
#include "netrxlen.skel.h"

#include <tpkit/cli.hpp>
#include <tpkit/columns.hpp>
#include <tpkit/histogram.hpp>
#include <tpkit/maps.hpp>
#include <tpkit/metrics.hpp>
#include <tpkit/skeleton.hpp>
#include <tpkit/stream.hpp>
#include <tpkit/tracefs.hpp>

#include <fmt/core.h>
#include <net/if.h>
#include <sys/stat.h>

#include <cstring>

namespace {

constexpr const char* examples = R"(  netrxlen                  # histogram of every received packet's length, at Ctrl-C
  netrxlen 1 5              # print every second, five times
  netrxlen --dev eth0       # only packets received on eth0 (in this network namespace)
  netrxlen --per-dev        # one histogram per device
  netrxlen --event netif_rx # count at netif_rx instead of netif_receive_skb
  netrxlen --json -d 10     # after 10 seconds, the histogram as JSON
)";

constexpr std::uint32_t max_devices = 1024;

struct Options {
    std::string event = "netif_receive_skb";
    std::string dev;
    bool per_dev = false;
};

std::uint32_t current_netns_inode()
{
    struct stat st{};
    if (stat("/proc/self/ns/net", &st) != 0)
        throw tpkit::Error(tpkit::Exit::failure, "cannot read /proc/self/ns/net");
    return static_cast<std::uint32_t>(st.st_ino);
}

// The histograms since the previous call: one per device with --per-dev, else one (also when
// empty, so that JSON readers get a total of 0).
tpkit::Reading collect(const Options& options, tpkit::SwappedMap& hists, tpkit::MissedWatch& missed)
{
    tpkit::Reading reading;
    auto entries = hists.drain();
    missed.report();
    if (entries.empty() && !options.per_dev)
        entries.push_back({{}, {}});
    for (const auto& entry : entries) {
        std::vector<tpkit::Label> labels{{"event", "net:" + options.event}};
        if (options.per_dev) {
            netrxlen_key key{};
            std::memcpy(&key, entry.key.data(), std::min(entry.key.size(), sizeof(key)));
            labels.push_back({"dev", std::string(tpkit::text_of(key.dev))});
        }
        reading.metrics.push_back({"len", "received packet lengths", "bytes", std::move(labels),
                                   tpkit::Histogram::from_log2(entry.counters)});
    }
    return reading;
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("netrxlen", "Histogram of received packet lengths, in the kernel.", examples);
    Options options;
    cli.add_common();
    cli.add_interval_count();
    cli.app().add_option("--event", options.event,
                         "netif_receive_skb (default) or netif_rx");
    cli.app().add_option("--dev", options.dev, "only packets received on device DEV");
    cli.app().add_flag("--per-dev", options.per_dev, "one histogram per device");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        const tpkit::CommonOptions& common = cli.options();
        if (options.event.rfind("net:", 0) == 0)
            options.event.erase(0, 4);
        if (options.event != "netif_receive_skb" && options.event != "netif_rx")
            throw tpkit::Error(tpkit::Exit::unknown_target,
                               fmt::format("unknown event '{}': netrxlen counts at "
                                           "netif_receive_skb or netif_rx", options.event));
        std::uint32_t ifindex = 0;
        if (!options.dev.empty()) {
            ifindex = if_nametoindex(options.dev.c_str());
            if (ifindex == 0)
                throw tpkit::Error(tpkit::Exit::unknown_target,
                                   fmt::format("unknown device '{}'", options.dev));
        }
        tpkit::tracefs_root();

        auto skel = tpkit::Skeleton<netrxlen_bpf>::open("netrxlen");
        tpkit::apply_task_filters(*skel, common);
        skel->rodata->target_ifindex = ifindex;
        skel->rodata->target_netns = ifindex ? current_netns_inode() : 0;
        skel->rodata->per_dev = options.per_dev;
        tpkit::SwappedMap hists(skel->maps.hists, skel->maps.hists_a, skel->maps.hists_b);
        hists.set_max_entries(options.per_dev ? max_devices : 1);
        skel.load();
        auto link = tpkit::attach_tracepoint(skel->progs.packet_received, "net", options.event);

        tpkit::MissedWatch missed("netrxlen", skel->maps.tpkit_missed,
                                  fmt::format("more than {} devices", max_devices));
        tpkit::StopSignal stop(common.duration);
        tpkit::run_aggregate(common, stop, [&] { return collect(options, hists, missed); });
    });
}
