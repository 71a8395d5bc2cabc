// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What softirqs and hardirqs share: bcc's options (--count, -d histograms, -N nanoseconds) and
// tables (one row per softirq vector or hard IRQ name: its total time, or with -C its count), from
// statistics counted in the kernel (struct irq_stats, bpf/irq_time.bpf.h) in a swapped map named
// `stats`, drained each interval.
#pragma once

#include <tpkit/tools/softirqs.h>

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/task_filters.hpp>

#include <bpf/libbpf.h>
#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace tpkit::irq_tables {

struct Options {
    bool count = false;
    bool histograms = false;
    bool nanoseconds = false;
};

// count_names: "-C,--count" as in bcc's softirqs; libbpf-tools' hardirqs now gives -C another
// meaning (per CPU), so there --count has no short form.
inline void add_options(Cli& cli, Options& options, const std::string& count_names)
{
    cli.flag(count_names, options.count, "show event counts instead of timing");
    cli.flag("-d,--dist,--distributed", options.histograms, "show distributions as histograms");
    cli.flag("-N,--nanoseconds", options.nanoseconds, "output in nanoseconds");
}

// What a tool counts: the event it counts at ("irq:softirq_exit"), the key's label ("softirq"),
// what is timed ("time in softirqs"), and the name of a key.
template <typename Key>
struct Describe {
    std::string event;
    std::string label;
    std::string help;
    std::function<std::string(const Key&)> name;
};

// The collector of softirqs and hardirqs: checks the options, opens Skel, applies the task
// filters and the options, sizes the map for max_keys, loads and attaches. Each collect gives
// the table (or histograms) since the previous one, largest first as bcc sorts them.
template <typename Skel, typename Key>
class Collector : public SkeletonCollector<Skel> {
public:
    Collector(const Cli& cli, const Options& options, std::uint32_t max_keys,
              Describe<Key> describe)
        : SkeletonCollector<Skel>(opened(cli, options)), options_(options),
          describe_(std::move(describe)),
          stats_(this->skel_->maps.stats, this->skel_->maps.stats_a, this->skel_->maps.stats_b)
    {
        stats_.set_max_entries(max_keys);
        this->load_and_attach(
            fmt::format("more than {} {}s in an interval", max_keys, describe_.label));
    }

    Reading collect(Drain drain) override
    {
        struct Row {
            std::string name;
            std::vector<std::uint64_t> counters; // struct irq_stats, summed over CPUs
        };
        std::vector<Row> rows;
        for (const auto& entry : stats_.drain(drain)) {
            const auto key = entry.key_as<Key>();
            rows.push_back({describe_.name(key), entry.counters});
        }
        this->report_missed();
        const std::size_t value = options_.count ? 0 : 1; // irq_stats.count or .total_ns
        std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
            return a.counters.at(value) != b.counters.at(value)
                       ? a.counters.at(value) > b.counters.at(value)
                       : a.name < b.name;
        });

        Reading reading;
        const std::string unit = options_.nanoseconds ? "nsecs" : "usecs";
        if (!options_.histograms) {
            reading.counter_labels = {describe_.label};
            if (options_.count)
                reading.counter_columns = {{"TOTAL_count", "count", 1, 0, ""}};
            else
                reading.counter_columns = {
                    {"TOTAL_" + unit, "time", options_.nanoseconds ? 1u : 1000u, 0, ""}};
        }
        for (const Row& row : rows) {
            std::vector<Label> labels{{describe_.label, row.name}};
            if (options_.histograms) {
                std::span<const std::uint64_t> slots(row.counters);
                reading.metrics.push_back(
                    {unit, describe_.help, unit,
                     {{"event", describe_.event}, {describe_.label, row.name}},
                     Histogram::from_log2(slots.subspan(2))});
            } else if (options_.count) {
                reading.metrics.push_back(
                    {"count", describe_.help, "", labels, row.counters.at(0)});
            } else {
                reading.metrics.push_back(
                    {"time", describe_.help, "ns", labels, row.counters.at(1)});
            }
        }
        return reading;
    }

private:
    static Skeleton<Skel> opened(const Cli& cli, const Options& options)
    {
        if (options.count && (options.histograms || options.nanoseconds))
            throw Error(Exit::usage, "--count counts events: it cannot be used with -d or -N");
        auto skel = Skeleton<Skel>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        skel->rodata->histograms = options.histograms;
        skel->rodata->nanoseconds = options.nanoseconds;
        return skel;
    }

    Options options_;
    Describe<Key> describe_;
    SwappedMap stats_;
};

} // namespace tpkit::irq_tables
