// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/biopattern.hpp"

#include <tpkit/tools/biopattern.h>
#include "biopattern.skel.h"

#include <tpkit/run/block.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>

namespace tpkit::biopattern {
namespace {

// Disks the counts' map holds.
constexpr std::uint32_t max_disks = 1024;

// The counts since the previous call, one row per disk that completed I/O, by name.
class Collector : public SkeletonCollector<biopattern_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(disk_filter::open<biopattern_bpf>(cli, options)),
          counts_(skel_->maps.counts, skel_->maps.counts_a, skel_->maps.counts_b)
    {
        counts_.set_max_entries(max_disks);
        load_and_attach(fmt::format("more than {} disks", max_disks));
    }

    Reading collect(Drain drain) override
    {
        auto entries = counts_.drain(drain);
        report_missed();
        Reading reading;
        reading.counter_labels = {"disk"};
        reading.counter_columns = {{"%RND", "random", 1, 0, "count", true},
                                   {"%SEQ", "sequential", 1, 0, "count", true},
                                   {"COUNT", "count", 1, 0, ""},
                                   {"KBYTES", "bytes", 1024, 0, ""}};
        std::vector<std::pair<std::string, biopattern_counts>> disks;
        for (const auto& entry : entries) {
            const auto dev = entry.key_as<std::uint32_t>();
            // The per-CPU values, summed: three counters in the struct's order.
            biopattern_counts sum{};
            if (entry.counters.size() >= 3)
                sum = {entry.counters[0], entry.counters[1], entry.counters[2]};
            disks.emplace_back(names_.name_of(dev), sum);
        }
        std::sort(disks.begin(), disks.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [disk, c] : disks) {
            std::vector<Label> labels{{"disk", disk}};
            reading.metrics.push_back(
                {"count", "completions", "", labels, c.sequential + c.random});
            reading.metrics.push_back(
                {"sequential", "sequential completions", "", labels, c.sequential});
            reading.metrics.push_back({"random", "random completions", "", labels, c.random});
            reading.metrics.push_back({"bytes", "bytes completed", "bytes", labels, c.bytes});
        }
        return reading;
    }

private:
    SwappedMap counts_;
    BlockDeviceNames names_;
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

} // namespace tpkit::biopattern
