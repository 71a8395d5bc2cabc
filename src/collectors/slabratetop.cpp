// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/slabratetop.hpp"
#include "collectors/top_screen.hpp"

#include <tpkit/tools/slabratetop.h>
#include "slabratetop.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/run/task_filters.hpp>

#include <fmt/core.h>
#include <strings.h>

#include <algorithm>
#include <vector>

namespace tpkit::slabratetop {
namespace {

struct Row {
    std::string name;
    slabratetop_counts counts;
};

// bcc's orders: by bytes or allocations, largest first, or by name (case aside), A first.
bool before(const Options& options, const Row& a, const Row& b)
{
    if (options.sort == "name")
        return strcasecmp(a.name.c_str(), b.name.c_str()) < 0;
    if (options.sort == "count")
        return a.counts.allocs > b.counts.allocs;
    return a.counts.bytes > b.counts.bytes;
}

// The allocations and their bytes, by cache name.
class Collector : public SkeletonCollector<slabratetop_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli)), options_(options),
          counts_(skel_->maps.counts, skel_->maps.counts_a, skel_->maps.counts_b),
          screen_(options.no_clear)
    {
        counts_.set_max_entries(max_keys);
        load_and_attach(fmt::format("more than {} caches in an interval", max_keys));
    }

    // The top rows since the previous call, in order.
    Reading collect(Drain drain) override
    {
        auto entries = counts_.drain(drain);
        report_missed();
        std::vector<Row> rows;
        for (const auto& entry : entries) {
            const auto key = entry.key_as<slabratetop_key>();
            Row row{std::string(text_of(key.name)), {}};
            // The per-CPU values, summed: the struct's two counters in order.
            if (entry.counters.size() >= 2)
                row.counts = {entry.counters[0], entry.counters[1]};
            rows.push_back(row);
        }
        keep_top_rows(rows, [&](const Row& a, const Row& b) { return before(options_, a, b); },
                      options_.rows);

        Reading reading;
        reading.counter_labels = {"cache"};
        reading.counter_columns = {{"ALLOCS", "allocs", 1, 0, ""}, {"BYTES", "bytes", 1, 0, ""}};
        for (const Row& r : rows) {
            std::vector<Label> labels{{"cache", r.name}};
            reading.metrics.push_back({"allocs", "objects allocated", "", labels, r.counts.allocs});
            reading.metrics.push_back({"bytes", "bytes of the objects' slots", "bytes", labels,
                                       r.counts.bytes});
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
    static Skeleton<slabratetop_bpf> opened(const Cli& cli)
    {
        auto skel = Skeleton<slabratetop_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        return skel;
    }

    Options options_;
    SwappedMap counts_;
    TopScreen screen_; // in text: each table on a screen of its own
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    cli.flag("-C,--noclear", options.no_clear, "do not clear the screen");
    cli.option("-r,--rows", options.rows, "at most ROWS rows (20)")
        .range(std::size_t(1), std::size_t(max_keys));
    cli.option("-s,--sort", options.sort, "sort by size (bytes, the default), count or name")
        .one_of({"size", "count", "name"});
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::slabratetop
