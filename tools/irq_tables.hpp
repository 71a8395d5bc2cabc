// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What softirqs and hardirqs share: bcc's options (--count, -d histograms, -N nanoseconds) and tables (one row per softirq vector or hard IRQ name: its total time, or with -C
// its count), from statistics counted in the kernel (struct irq_stats, bpf/irq_time.bpf.h) in a
// swapped map named `stats`, drained each interval.
#pragma once

#include "softirqs.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <bpf/libbpf.h>
#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
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

// The table (or histograms) since the previous call, largest first as bcc sorts them.
template <typename Key>
Reading collect(const Options& options, SwappedMap& stats, MissedWatch& missed,
                const Describe<Key>& describe, Drain drain)
{
    struct Row {
        std::string name;
        std::vector<std::uint64_t> counters; // struct irq_stats, summed over CPUs
    };
    std::vector<Row> rows;
    for (const auto& entry : stats.drain(drain)) {
        const auto key = entry.key_as<Key>();
        rows.push_back({describe.name(key), entry.counters});
    }
    missed.report();
    const std::size_t value = options.count ? 0 : 1; // irq_stats.count or .total_ns
    std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
        return a.counters.at(value) != b.counters.at(value) ? a.counters.at(value) > b.counters.at(value)
                                                          : a.name < b.name;
    });

    Reading reading;
    const std::string unit = options.nanoseconds ? "nsecs" : "usecs";
    if (!options.histograms) {
        reading.counter_labels = {describe.label};
        if (options.count)
            reading.counter_columns = {{"TOTAL_count", "count", 1, 0, ""}};
        else
            reading.counter_columns = {
                {"TOTAL_" + unit, "time", options.nanoseconds ? 1u : 1000u, 0, ""}};
    }
    for (const Row& row : rows) {
        std::vector<Label> labels{{describe.label, row.name}};
        if (options.histograms) {
            std::span<const std::uint64_t> slots(row.counters);
            reading.metrics.push_back({unit, describe.help, unit,
                                       {{"event", describe.event}, {describe.label, row.name}},
                                       Histogram::from_log2(slots.subspan(2))});
        } else if (options.count) {
            reading.metrics.push_back({"count", describe.help, "", labels, row.counters.at(0)});
        } else {
            reading.metrics.push_back({"time", describe.help, "ns", labels, row.counters.at(1)});
        }
    }
    return reading;
}

// Checks the options, opens, configures, loads and attaches the tool's programs.
template <typename Skel, typename Key>
std::unique_ptr<Collector> open(const Cli& cli, const Options& options, std::uint32_t max_keys,
                                const Describe<Key>& describe)
{
    if (options.count && (options.histograms || options.nanoseconds))
        throw Error(Exit::usage, "--count counts events: it cannot be used with -d or -N");
    struct State {
        Skeleton<Skel> skel;
        SwappedMap stats;
        std::optional<MissedWatch> missed;
    };
    auto skel = Skeleton<Skel>::open(cli.name());
    apply_task_filters(*skel, cli.options());
    skel->rodata->histograms = options.histograms;
    skel->rodata->nanoseconds = options.nanoseconds;
    SwappedMap stats(skel->maps.stats, skel->maps.stats_a, skel->maps.stats_b);
    stats.set_max_entries(max_keys);
    auto state = std::make_shared<State>(State{std::move(skel), stats, {}});
    state->skel.load();
    state->skel.attach();
    state->missed.emplace(cli.name(), state->skel->maps.tpkit_missed,
                          fmt::format("more than {} {}s in an interval", max_keys, describe.label));
    State& s = *state;
    return std::make_unique<CollectorOf>(
        state, std::vector<bpf_object*>{s.skel->obj},
        [&s, options, describe](Drain drain) { return collect(options, s.stats, *s.missed, describe, drain); },
        [&s] { return s.missed->total(); });
}

// A whole tool's main: the common options, [interval] [count], the tool's add_options() and
// open (Skel's open<> with its max_keys and Describe).
inline int tool_main(int argc, char** argv, const std::string& name, const std::string& description,
                     const std::string& examples,
                     const std::function<void(Cli&, Options&)>& add_tool_options,
                     const std::function<std::unique_ptr<Collector>(const Cli&, const Options&)>& open)
{
    Cli cli(name, description, examples);
    Options options;
    cli.add_common();
    cli.add_interval_count();
    add_tool_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return run_tool(cli.name(), [&] { run_collector(cli.options(), *open(cli, options)); });
}

} // namespace tpkit::irq_tables
