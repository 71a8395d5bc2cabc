// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/bitesize.hpp"

#include <tpkit/tools/bitesize.h>
#include "bitesize.skel.h"

#include <tpkit/output/histogram.hpp>
#include <tpkit/run/columns.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>

namespace tpkit::bitesize {
namespace {

// Process names the histogram map holds per interval.
constexpr std::uint32_t max_names = 10240;

// The histograms since the previous call, one per process name, by name.
class Collector : public SkeletonCollector<bitesize_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(disk_filter::open<bitesize_bpf>(cli, options)),
          hists_(skel_->maps.hists, skel_->maps.hists_a, skel_->maps.hists_b)
    {
        hists_.set_max_entries(max_names);
        load_and_attach(fmt::format("more than {} process names in an interval", max_names));
    }

    Reading collect(Drain drain) override
    {
        auto entries = hists_.drain(drain);
        report_missed();
        std::vector<std::pair<std::string, Histogram>> named;
        for (const auto& entry : entries) {
            const auto key = entry.key_as<bitesize_key>();
            named.emplace_back(std::string(text_of(key.comm)),
                               Histogram::from_log2(entry.counters));
        }
        std::sort(named.begin(), named.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        Reading reading;
        for (auto& [comm, hist] : named)
            reading.metrics.push_back({"kbytes", "block I/O sizes", "kbytes",
                                       {{"event", "block:block_rq_issue"}, {"comm", comm}},
                                       std::move(hist)});
        return reading;
    }

private:
    SwappedMap hists_;
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    disk_filter::add_options(cli, options);
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::bitesize
