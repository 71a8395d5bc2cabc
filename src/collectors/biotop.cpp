// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/biotop.hpp"
#include "collectors/top_screen.hpp"

#include <tpkit/tools/biotop.h>
#include "biotop.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/run/block.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/limits.h>
#include <tpkit/run/task_filters.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <vector>

namespace tpkit::biotop {
namespace {

struct Row {
    biotop_key key;
    biotop_counts counts;
};

// bcc's orders, largest first; "all" adds the three figures up as bcc does (microseconds).
std::uint64_t sort_value(const Options& options, const biotop_counts& c)
{
    if (options.sort == "io")
        return c.io;
    if (options.sort == "bytes")
        return c.bytes;
    if (options.sort == "time")
        return c.ns;
    return c.io + c.bytes + c.ns / 1000;
}

// The requests completed, their bytes and time at the device, by process, disk and direction.
class Collector : public SkeletonCollector<biotop_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options),
          counts_(skel_->maps.counts, skel_->maps.counts_a, skel_->maps.counts_b),
          screen_(options.no_clear)
    {
        counts_.set_max_entries(max_keys);
        load_and_attach(fmt::format("more than {} requests in flight, or more than {} rows in an "
                                    "interval", TPKIT_TIMING_MAX_ENTRIES, max_keys));
    }

    // The top rows since the previous call, in order.
    Reading collect(Drain drain) override
    {
        auto entries = counts_.drain(drain);
        report_missed();
        std::vector<Row> rows;
        for (const auto& entry : entries) {
            Row row{};
            row.key = entry.key_as<decltype(row.key)>();
            // The per-CPU values, summed: the struct's three counters in order.
            if (entry.counters.size() >= 3)
                row.counts = {entry.counters[0], entry.counters[1], entry.counters[2]};
            rows.push_back(row);
        }
        keep_top_rows(rows, [&](const Row& a, const Row& b) {
            return sort_value(options_, a.counts) > sort_value(options_, b.counts);
        }, options_.rows);

        Reading reading;
        reading.counter_labels = {"pid", "comm", "d", "maj", "min", "disk"};
        reading.counter_columns = {{"I/O", "io", 1, 0, ""},
                                   {"Kbytes", "bytes", 1024, 0, ""},
                                   {"AVGms", "ns", 1000000, 2, "io"}};
        for (const Row& r : rows) {
            std::vector<Label> labels{{"pid", std::to_string(r.key.pid), true},
                                      {"comm", std::string(text_of(r.key.comm))},
                                      {"d", r.key.write ? "W" : "R"},
                                      {"maj", std::to_string(r.key.dev >> TPKIT_MINOR_BITS), true},
                                      {"min", std::to_string(r.key.dev & TPKIT_MINOR_MASK), true},
                                      {"disk", names_.name_of(r.key.dev)}};
            reading.metrics.push_back({"io", "requests completed", "", labels, r.counts.io});
            reading.metrics.push_back({"bytes", "bytes completed", "bytes", labels, r.counts.bytes});
            reading.metrics.push_back({"ns", "time at the device", "ns", labels, r.counts.ns});
        }
        return reading;
    }

    void print(Drain drain, const CommonOptions& options, Output& out) override
    {
        if (!options.json)
            screen_.heading(out);
        MetricCollector::print(drain, options, out);
    }

private:
    static Skeleton<biotop_bpf> opened(const Cli& cli, const Options& options)
    {
        auto skel = Skeleton<biotop_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        apply_disk_filter(*skel, options.disk);
        follow_requests_from_submission(*skel);
        return skel;
    }

    Options options_;
    SwappedMap counts_;
    BlockDeviceNames names_;
    TopScreen screen_; // in text: each table on a screen of its own
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    cli.add_disk(options.disk);
    cli.flag("-C,--noclear", options.no_clear, "do not clear the screen");
    cli.option("-r,--rows", options.rows, "at most ROWS rows (20)")
        .range(std::size_t(1), std::size_t(max_keys));
    cli.option("-s,--sort", options.sort, "sort by all (default), io, bytes or time")
        .one_of({"all", "io", "bytes", "time"});
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::biotop
