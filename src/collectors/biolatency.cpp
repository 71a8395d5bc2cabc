// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/biolatency.hpp"

#include <tpkit/tools/biolatency.h>
#include "biolatency.skel.h"

#include <tpkit/output/histogram.hpp>
#include <tpkit/run/block.hpp>
#include <tpkit/limits.h>
#include <tpkit/run/task_filters.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <tuple>

namespace tpkit::biolatency {
namespace {

// The histograms since the previous call: one per disk and/or flags when split, else one (also
// when empty, so that JSON readers get a total of 0).
class Collector : public SkeletonCollector<biolatency_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options),
          hists_(skel_->maps.hists, skel_->maps.hists_a, skel_->maps.hists_b)
    {
        hists_.set_max_entries(options.per_disk || options.per_flags ? max_keys : 1);
        load_and_attach(fmt::format("more than {} requests in flight, or more than {} disks and "
                                    "flags in an interval", TPKIT_TIMING_MAX_ENTRIES, max_keys));
    }

    Reading collect(Drain drain) override
    {
        auto entries = hists_.drain(drain);
        report_missed();
        const bool split = options_.per_disk || options_.per_flags;
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

        const std::string unit = options_.milliseconds ? "msecs" : "usecs";
        Reading reading;
        for (auto& [key, hist] : keyed) {
            std::vector<Label> labels{{"event", "block:block_rq_complete"}};
            if (options_.per_disk)
                labels.push_back({"disk", names_.name_of(key.dev)});
            if (options_.per_flags)
                labels.push_back({"flags", request_flags_text(key.op, key.flags)});
            reading.metrics.push_back(
                {unit, "block I/O latency", unit, std::move(labels), std::move(hist)});
        }
        return reading;
    }

private:
    static Skeleton<biolatency_bpf> opened(const Cli& cli, const Options& options)
    {
        auto skel = Skeleton<biolatency_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        apply_disk_filter(*skel, options.disk);
        skel->rodata->queued = options.queued;
        skel->rodata->per_disk = options.per_disk;
        skel->rodata->per_flags = options.per_flags;
        skel->rodata->milliseconds = options.milliseconds;
        check_libbpf(bpf_program__set_autoload(skel->progs.rq_insert, options.queued),
                     "cannot choose biolatency's programs");
        return skel;
    }

    Options options_;
    SwappedMap hists_;
    BlockDeviceNames names_;
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    cli.add_disk(options.disk);
    cli.flag("-Q,--queued", options.queued, "include the time queued in the kernel");
    cli.flag("-D,--disk-split", options.per_disk, "one histogram per disk");
    cli.flag("-F,--flag-split,--flag", options.per_flags, "one histogram per operation and flags");
    cli.flag("-m,--milliseconds", options.milliseconds, "histograms in milliseconds");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::biolatency
