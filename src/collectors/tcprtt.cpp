// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/tcprtt.hpp"

#include <tpkit/tools/tcprtt.h>
#include "tcprtt.skel.h"

#include <tpkit/output/histogram.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <span>

namespace tpkit::tcprtt {
namespace {

template <class Skel>
void apply_address(const InetAddress& address, Skel& skel, bool local)
{
    auto& family = local ? skel.rodata->target_laddr_family : skel.rodata->target_raddr_family;
    auto& bytes = local ? skel.rodata->target_laddr : skel.rodata->target_raddr;
    family = address.family;
    std::memcpy(const_cast<std::uint8_t*>(bytes), address.bytes, sizeof(address.bytes));
}

// The histograms since the previous call, one per address when split (by address), else one
// (also when empty, so that JSON readers get a total of 0); with -e a table of each one's count
// and average first.
class Collector : public SkeletonCollector<tcprtt_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options),
          hists_(skel_->maps.hists, skel_->maps.hists_a, skel_->maps.hists_b)
    {
        hists_.set_max_entries(options.split_local || options.split_remote ? max_keys : 1);
        load_and_attach(fmt::format("more than {} addresses in an interval", max_keys));
    }

    Reading collect(Drain drain) override
    {
        auto entries = hists_.drain(drain);
        report_missed();
        const bool split = options_.split_local || options_.split_remote;
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

        const std::string unit = options_.milliseconds ? "msecs" : "usecs";
        const std::string address_label = options_.split_local ? "laddr" : "raddr";
        Reading reading;
        if (options_.averages) {
            if (split)
                reading.counter_labels = {address_label};
            reading.counter_columns = {{"COUNT", "count", 1, 0, ""},
                                       {fmt::format("AVG ({})", unit), "total", 1, 0, "count"}};
        }
        for (auto& [key, counters] : keyed) {
            std::vector<Label> labels{{"event", "tcp:tcp_probe"}};
            if (split)
                labels.push_back({address_label, address_text(key.family, key.addr)});
            auto hist = Histogram::from_log2(std::span(counters).first(TPKIT_LOG2_SLOTS));
            if (options_.averages) {
                reading.metrics.push_back({"count", "samples", "", labels, hist.total()});
                reading.metrics.push_back(
                    {"total", "sum of the samples", unit, labels, counters[TPKIT_LOG2_SLOTS]});
            }
            reading.metrics.push_back(
                {unit, "smoothed TCP round-trip time", unit, std::move(labels), std::move(hist)});
        }
        return reading;
    }

private:
    static Skeleton<tcprtt_bpf> opened(const Cli& cli, const Options& options)
    {
        auto skel = Skeleton<tcprtt_bpf>::open(cli.name());
        apply_inet_filter(*skel, options.filter);
        apply_address(options.local_address, *skel, true);
        apply_address(options.remote_address, *skel, false);
        skel->rodata->split_local = options.split_local;
        skel->rodata->split_remote = options.split_remote;
        skel->rodata->milliseconds = options.milliseconds;
        return skel;
    }

    Options options_;
    SwappedMap hists_;
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    add_family_options(cli, options.filter);
    add_ports_option(cli, "-p,--lport", options.filter.local_ports,
                     "only sockets whose local port is one of PORTS (comma-separated)");
    add_ports_option(cli, "-P,--rport", options.filter.remote_ports,
                     "only sockets whose remote port is one of PORTS (comma-separated)");
    add_address_option(cli, "-a,--laddr", options.local_address,
                       "only sockets whose local address is ADDR");
    add_address_option(cli, "-A,--raddr", options.remote_address,
                       "only sockets whose remote address is ADDR");
    auto by_local =
        cli.flag("-b,--byladdr", options.split_local, "one histogram per local address");
    auto by_remote =
        cli.flag("-B,--byraddr", options.split_remote, "one histogram per remote address");
    by_local.excludes(by_remote);
    cli.flag("-e,--extension", options.averages, "also each histogram's count and average");
    cli.flag("-m,--milliseconds,--millisecond", options.milliseconds, "histograms in milliseconds");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::tcprtt
