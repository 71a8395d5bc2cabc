// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/readahead.hpp"

#include <tpkit/tools/readahead.h>
#include "readahead.skel.h"

#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/run/task_filters.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>

namespace tpkit::readahead {
namespace {

// Files (or devices) the histogram map holds per interval, times the four events.
constexpr std::uint32_t max_keys = 10240;

struct EventInfo {
    const char* tracepoint;
    const char* kind; // the text heading's key: which histogram this is
    const char* name;
    const char* help;
};

// By enum readahead_event.
constexpr std::array<EventInfo, READAHEAD_EVENTS> events{{
    {"readahead:page_cache_sync_ra", "sync", "req_count", "pages a read asked for, where a page was missing"},
    {"readahead:page_cache_async_ra", "async", "req_count", "pages a read asked for, at a page marked for readahead"},
    {"readahead:page_cache_ra_order", "ra_order", "size", "pages of a readahead window"},
    {"readahead:page_cache_ra_unbounded", "ra_unbounded", "nr_to_read", "pages of a readahead read page by page"},
}};

std::string dev_text(std::uint32_t dev) { return fmt::format("{}:{}", dev >> 20, dev & 0xfffff); }

class Collector : public SkeletonCollector<readahead_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options),
          hists_(skel_->maps.hists, skel_->maps.hists_a, skel_->maps.hists_b)
    {
        hists_.set_max_entries(max_keys);
        load_and_attach(fmt::format("more than {} files, devices and events in an interval", max_keys));
    }

    Reading collect(Drain drain) override
    {
        auto entries = hists_.drain(drain);
        report_missed();
        std::vector<std::pair<readahead_key, Histogram>> keyed;
        for (const auto& entry : entries) {
            const auto key = entry.key_as<readahead_key>();
            if (key.event < READAHEAD_EVENTS)
                keyed.emplace_back(key, Histogram::from_log2(entry.counters));
        }
        std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
            return std::tie(a.first.dev, a.first.ino, a.first.event) <
                   std::tie(b.first.dev, b.first.ino, b.first.event);
        });
        Reading reading;
        for (auto& [key, hist] : keyed) {
            const EventInfo& e = events[key.event];
            std::vector<Label> labels{{"event", e.tracepoint}, {"readahead", e.kind}};
            if (options_.per_device || options_.per_file)
                labels.push_back({"dev", dev_text(key.dev)});
            if (options_.per_file)
                labels.push_back({"ino", std::to_string(key.ino), true});
            reading.metrics.push_back({e.name, e.help, "pages", std::move(labels), std::move(hist)});
        }
        return reading;
    }

private:
    static Skeleton<readahead_bpf> opened(const Cli& cli, const Options& options)
    {
        for (const auto& e : events)
            require_event(parse_tracepoint_name(e.tracepoint), "kernels newer than 6.12 have it");
        auto skel = Skeleton<readahead_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        skel->rodata->split_by = options.per_file     ? READAHEAD_SPLIT_FILE
                                 : options.per_device ? READAHEAD_SPLIT_DEVICE
                                                      : READAHEAD_SPLIT_NONE;
        return skel;
    }

    Options options_;
    SwappedMap hists_;
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    cli.flag("--per-device", options.per_device, "histograms per device (of the file's filesystem)");
    cli.flag("--per-file", options.per_file, "histograms per file (device and inode)");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::readahead
