// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biolatency: block I/O latency as a histogram, counted in the kernel; bcc's biolatency.
#include "biolatency.h"
#include "biolatency.skel.h"

#include <tpkit/block.hpp>
#include <tpkit/cli.hpp>
#include <tpkit/histogram.hpp>
#include <tpkit/maps.hpp>
#include <tpkit/metrics.hpp>
#include <tpkit/skeleton.hpp>
#include <tpkit/stream.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <tuple>

namespace {

constexpr const char* examples = R"(  biolatency                # block I/O latency histogram, at Ctrl-C
  biolatency 1 10           # print every second, ten times
  biolatency -mT 1          # every second, in milliseconds, with the time
  biolatency -Q             # include the time queued in the kernel
  biolatency -D             # one histogram per disk
  biolatency -F             # one histogram per operation and flags
  biolatency -d sda         # only I/O to sda
  biolatency --json -d sda --duration 10  # after 10 seconds, sda's histogram as JSON
)";

// Keys of the split histograms: disks times operations and flags.
constexpr std::uint32_t max_keys = 1024;

struct Options {
    std::string disk;
    bool queued = false;
    bool per_disk = false;
    bool per_flags = false;
    bool milliseconds = false;
};

// The histograms since the previous call: one per disk and/or flags when split, else one (also
// when empty, so that JSON readers get a total of 0).
tpkit::Reading collect(const Options& options, tpkit::SwappedMap& hists,
                       tpkit::MissedWatch& missed, tpkit::BlockDeviceNames& names)
{
    auto entries = hists.drain();
    missed.report();
    const bool split = options.per_disk || options.per_flags;
    if (entries.empty() && !split)
        entries.push_back({{}, {}});
    std::vector<std::pair<biolatency_key, tpkit::Histogram>> keyed;
    for (const auto& entry : entries) {
        const auto key = entry.key_as<biolatency_key>();
        keyed.emplace_back(key, tpkit::Histogram::from_log2(entry.counters));
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
        return std::tie(a.first.dev, a.first.op, a.first.flags) <
               std::tie(b.first.dev, b.first.op, b.first.flags);
    });

    const std::string unit = options.milliseconds ? "msecs" : "usecs";
    tpkit::Reading reading;
    for (auto& [key, hist] : keyed) {
        std::vector<tpkit::Label> labels{{"event", "block:block_rq_complete"}};
        if (options.per_disk)
            labels.push_back({"disk", names.name_of(key.dev)});
        if (options.per_flags)
            labels.push_back({"flags", tpkit::request_flags_text(key.op, key.flags)});
        reading.metrics.push_back(
            {unit, "block I/O latency", unit, std::move(labels), std::move(hist)});
    }
    return reading;
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("biolatency",
                   "Summarize block device I/O latency as a histogram: from issue to the device "
                   "(with -Q from being queued) to completion.\n-p, -t, -u, --cgroup and --comm "
                   "select the task current when a request is issued (or queued).",
                   examples);
    Options options;
    cli.add_common();
    cli.add_interval_count();
    cli.add_disk(options.disk);
    auto& app = cli.app();
    app.add_flag("-Q,--queued", options.queued, "include the time queued in the kernel");
    app.add_flag("-D,--disk-split", options.per_disk, "one histogram per disk");
    app.add_flag("-F,--flag-split", options.per_flags, "one histogram per operation and flags");
    app.add_flag("-m,--milliseconds", options.milliseconds, "histograms in milliseconds");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        const tpkit::CommonOptions& common = cli.options();
        auto skel = tpkit::Skeleton<biolatency_bpf>::open(cli.name());
        tpkit::apply_task_filters(*skel, common);
        tpkit::apply_disk_filter(*skel, options.disk);
        skel->rodata->queued = options.queued;
        skel->rodata->per_disk = options.per_disk;
        skel->rodata->per_flags = options.per_flags;
        skel->rodata->milliseconds = options.milliseconds;
        bpf_program__set_autoload(skel->progs.rq_insert, options.queued);
        tpkit::SwappedMap hists(skel->maps.hists, skel->maps.hists_a, skel->maps.hists_b);
        hists.set_max_entries(options.per_disk || options.per_flags ? max_keys : 1);
        skel.load();
        skel.attach();

        tpkit::BlockDeviceNames names;
        tpkit::MissedWatch missed(
            cli.name(), skel->maps.tpkit_missed,
            fmt::format("more than {} requests in flight, or more than {} disks and flags in an "
                        "interval", TPKIT_TIMING_MAX_ENTRIES, max_keys));
        tpkit::StopSignal stop(common.duration);
        tpkit::run_aggregate(common, stop,
                             [&] { return collect(options, hists, missed, names); });
    });
}
