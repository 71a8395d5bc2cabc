// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcprtt: TCP's smoothed round-trip time as a histogram, sampled in the kernel at each segment an
// established socket receives; bcc's tcprtt, on the tcp:tcp_probe tracepoint.
#include "tcprtt.h"
#include "tcprtt.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/inet.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <span>

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

// Addresses of the split histograms in an interval.
constexpr std::uint32_t max_keys = 1024;

struct Options {
    tpkit::InetFilter filter;
    tpkit::InetAddress local_address;
    tpkit::InetAddress remote_address;
    bool split_local = false;
    bool split_remote = false;
    bool averages = false;
    bool milliseconds = false;
};

// The histograms since the previous call, one per address when split (by address), else one
// (also when empty, so that JSON readers get a total of 0); with -e a table of each one's count
// and average first.
tpkit::Reading collect(const Options& options, tpkit::SwappedMap& hists, tpkit::MissedWatch& missed,
                       tpkit::Drain drain)
{
    auto entries = hists.drain(drain);
    missed.report();
    const bool split = options.split_local || options.split_remote;
    if (entries.empty() && !split)
        entries.push_back({{}, {}});
    std::vector<std::pair<tcprtt_key, std::vector<std::uint64_t>>> keyed;
    for (auto& entry : entries) {
        const auto key = entry.key_as<tcprtt_key>();
        entry.counters.resize(sizeof(tcprtt_value) / sizeof(std::uint64_t));
        keyed.emplace_back(key, std::move(entry.counters));
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
        return std::memcmp(&a.first, &b.first, sizeof(tcprtt_key)) < 0;
    });

    const std::string unit = options.milliseconds ? "msecs" : "usecs";
    const std::string address_label = options.split_local ? "laddr" : "raddr";
    tpkit::Reading reading;
    if (options.averages) {
        if (split)
            reading.counter_labels = {address_label};
        reading.counter_columns = {{"COUNT", "count", 1, 0, ""},
                                   {fmt::format("AVG ({})", unit), "total", 1, 0, "count"}};
    }
    for (auto& [key, counters] : keyed) {
        std::vector<tpkit::Label> labels{{"event", "tcp:tcp_probe"}};
        if (split)
            labels.push_back({address_label, tpkit::address_text(key.family, key.addr)});
        auto hist = tpkit::Histogram::from_log2(
            std::span(counters).first(TPKIT_LOG2_SLOTS));
        if (options.averages) {
            reading.metrics.push_back({"count", "samples", "", labels, hist.total()});
            reading.metrics.push_back(
                {"total", "sum of the samples", unit, labels, counters[TPKIT_LOG2_SLOTS]});
        }
        reading.metrics.push_back(
            {unit, "smoothed TCP round-trip time", unit, std::move(labels), std::move(hist)});
    }
    return reading;
}

template <class Skel>
void apply_address(const tpkit::InetAddress& address, Skel& skel, bool local)
{
    auto& family = local ? skel.rodata->target_laddr_family : skel.rodata->target_raddr_family;
    auto& bytes = local ? skel.rodata->target_laddr : skel.rodata->target_raddr;
    family = address.family;
    std::memcpy(const_cast<std::uint8_t*>(bytes), address.bytes, sizeof(address.bytes));
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tcprtt",
                   "Summarize the smoothed round-trip time of TCP sockets as a histogram: one "
                   "sample per segment a socket receives while established.",
                   examples);
    Options options;
    cli.add_run_options();
    cli.add_interval_option();
    cli.add_interval_count();
    tpkit::add_family_options(cli, options.filter);
    tpkit::add_ports_option(cli, "-p,--lport", options.filter.local_ports,
                            "only sockets whose local port is one of PORTS (comma-separated)");
    tpkit::add_ports_option(cli, "-P,--rport", options.filter.remote_ports,
                            "only sockets whose remote port is one of PORTS (comma-separated)");
    tpkit::add_address_option(cli, "-a,--laddr", options.local_address,
                              "only sockets whose local address is ADDR");
    tpkit::add_address_option(cli, "-A,--raddr", options.remote_address,
                              "only sockets whose remote address is ADDR");
    auto by_local = cli.flag("-b,--byladdr", options.split_local, "one histogram per local address");
    auto by_remote = cli.flag("-B,--byraddr", options.split_remote, "one histogram per remote address");
    by_local.excludes(by_remote);
    cli.flag("-e,--extension", options.averages, "also each histogram's count and average");
    cli.flag("-m,--milliseconds,--millisecond", options.milliseconds, "histograms in milliseconds");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        const tpkit::CommonOptions& common = cli.options();
        auto skel = tpkit::Skeleton<tcprtt_bpf>::open(cli.name());
        tpkit::apply_inet_filter(*skel, options.filter);
        apply_address(options.local_address, *skel, true);
        apply_address(options.remote_address, *skel, false);
        skel->rodata->split_local = options.split_local;
        skel->rodata->split_remote = options.split_remote;
        skel->rodata->milliseconds = options.milliseconds;
        tpkit::SwappedMap hists(skel->maps.hists, skel->maps.hists_a, skel->maps.hists_b);
        hists.set_max_entries(options.split_local || options.split_remote ? max_keys : 1);
        skel.load();
        skel.attach();

        tpkit::MissedWatch missed(cli.name(), skel->maps.tpkit_missed,
                                  fmt::format("more than {} addresses in an interval", max_keys));
        tpkit::StopSignal stop(common);
        tpkit::run_aggregate(common, stop, [&](tpkit::Drain drain) { return collect(options, hists, missed, drain); });
    });
}
