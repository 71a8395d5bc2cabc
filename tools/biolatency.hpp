// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biolatency's collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include "biolatency.h"
#include "biolatency.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/block.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/stream.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>

namespace tpkit::biolatency {

// Keys of the split histograms: disks times operations and flags.
inline constexpr std::uint32_t max_keys = 1024;

struct Options {
    std::string disk;
    bool queued = false;
    bool per_disk = false;
    bool per_flags = false;
    bool milliseconds = false;
};

// The histograms since the previous call: one per disk and/or flags when split, else one (also
// when empty, so that JSON readers get a total of 0).
inline Reading collect(const Options& options, SwappedMap& hists,
                       MissedWatch& missed, BlockDeviceNames& names, Drain drain)
{
    auto entries = hists.drain(drain);
    missed.report();
    const bool split = options.per_disk || options.per_flags;
    if (entries.empty() && !split)
        entries.push_back({{}, {}});
    std::vector<std::pair<biolatency_key, Histogram>> keyed;
    for (const auto& entry : entries) {
        const auto key = entry.key_as<biolatency_key>();
        keyed.emplace_back(key, Histogram::from_log2(entry.counters));
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
        return std::tie(a.first.dev, a.first.op, a.first.flags) <
               std::tie(b.first.dev, b.first.op, b.first.flags);
    });

    const std::string unit = options.milliseconds ? "msecs" : "usecs";
    Reading reading;
    for (auto& [key, hist] : keyed) {
        std::vector<Label> labels{{"event", "block:block_rq_complete"}};
        if (options.per_disk)
            labels.push_back({"disk", names.name_of(key.dev)});
        if (options.per_flags)
            labels.push_back({"flags", request_flags_text(key.op, key.flags)});
        reading.metrics.push_back(
            {unit, "block I/O latency", unit, std::move(labels), std::move(hist)});
    }
    return reading;
}

// -d (after the common options), -Q, -D, -F, -m.
inline void add_options(Cli& cli, Options& options)
{
    cli.add_disk(options.disk);
    cli.flag("-Q,--queued", options.queued, "include the time queued in the kernel");
    cli.flag("-D,--disk-split", options.per_disk, "one histogram per disk");
    cli.flag("-F,--flag-split,--flag", options.per_flags, "one histogram per operation and flags");
    cli.flag("-m,--milliseconds", options.milliseconds, "histograms in milliseconds");
}

inline std::unique_ptr<Collector> open(const Cli& cli, const Options& options)
{
    struct State {
        Skeleton<biolatency_bpf> skel;
        SwappedMap hists;
        BlockDeviceNames names;
        std::optional<MissedWatch> missed;
    };
    auto skel = Skeleton<biolatency_bpf>::open(cli.name());
    apply_task_filters(*skel, cli.options());
    apply_disk_filter(*skel, options.disk);
    skel->rodata->queued = options.queued;
    skel->rodata->per_disk = options.per_disk;
    skel->rodata->per_flags = options.per_flags;
    skel->rodata->milliseconds = options.milliseconds;
    check_libbpf(bpf_program__set_autoload(skel->progs.rq_insert, options.queued),
                 "cannot choose biolatency's programs");
    SwappedMap hists(skel->maps.hists, skel->maps.hists_a, skel->maps.hists_b);
    hists.set_max_entries(options.per_disk || options.per_flags ? max_keys : 1);
    auto state = std::make_shared<State>(State{std::move(skel), hists, {}, {}});
    state->skel.load();
    state->skel.attach();
    state->missed.emplace(
        cli.name(), state->skel->maps.tpkit_missed,
        fmt::format("more than {} requests in flight, or more than {} disks and flags in an "
                    "interval", TPKIT_TIMING_MAX_ENTRIES, max_keys));
    State& s = *state;
    return std::make_unique<CollectorOf>(
        state, std::vector<bpf_object*>{s.skel->obj},
        [&s, options](Drain drain) { return collect(options, s.hists, *s.missed, s.names, drain); },
        [&s] { return s.missed->total(); });
}

} // namespace tpkit::biolatency
