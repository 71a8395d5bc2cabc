// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpcount: counts the events of any tracepoints in the kernel, in total or by a key.
#include <tpkit/cli.hpp>
#include <tpkit/engine.hpp>
#include <tpkit/maps.hpp>
#include <tpkit/metrics.hpp>
#include <tpkit/skeleton.hpp>
#include <tpkit/stream.hpp>
// After the tpkit headers: the skeleton's rodata uses their structs.
#include "tpcount.skel.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace {

constexpr const char* examples = R"(  tpcount sched:sched_process_fork                # forks, at Ctrl-C
  tpcount 'syscalls:sys_enter_*' --top 10 1       # the ten most frequent syscalls, every second
  tpcount syscalls:sys_enter_read --by comm       # read() calls by command name
  tpcount syscalls:sys_enter_read --by fd --filter 'count > 4096'
  tpcount sched:sched_switch --by prev_comm --json -d 5
)";

struct Options {
    std::vector<std::string> events;
    std::string by;
    std::string filter;
    std::size_t top = 0;
    std::uint32_t max_keys = 10240;
};

struct Row {
    std::uint32_t event;
    std::string key;
    std::uint64_t count;
};

class CountCollector {
public:
    CountCollector(const std::vector<tpkit::EventPlan>& plans, const tpkit::KeyChoice& key,
                   const Options& options, tpcount_bpf& skel)
        : plans_(plans), key_(key), options_(options), skel_(skel),
          by_key_(keyed_counts(skel))
    {
    }

    static tpkit::SwappedMap keyed_counts(tpcount_bpf& skel)
    {
        return {skel.maps.by_key, skel.maps.by_key_a, skel.maps.by_key_b};
    }

    // The counts since the previous call, largest first.
    tpkit::Reading collect()
    {
        std::vector<Row> rows;
        if (key_.source == TPKIT_KEY_NONE) {
            auto totals = tpkit::sum_percpu_array(skel_.maps.totals);
            previous_.resize(totals.size());
            for (std::uint32_t i = 0; i < totals.size() && i < plans_.size(); i++) {
                std::uint64_t count = totals[i].at(0) - std::exchange(previous_[i], totals[i].at(0));
                if (count || plans_.size() == 1)
                    rows.push_back({i, "", count});
            }
        } else {
            for (const auto& entry : by_key_.drain()) {
                const auto k = entry.key_as<tpkit_engine_key>();
                tpkit::note_cut_key("tpcount", k, key_);
                if (k.event >= plans_.size())
                    continue;
                rows.push_back({k.event, tpkit::key_text(k, key_, plans_[k.event].format),
                                entry.counters.at(0)});
            }
        }
        std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
            if (a.count != b.count)
                return a.count > b.count;
            return std::tie(plans_[a.event].name.system, plans_[a.event].name.event, a.key) <
                   std::tie(plans_[b.event].name.system, plans_[b.event].name.event, b.key);
        });
        if (options_.top && rows.size() > options_.top)
            rows.resize(options_.top);
        missed_.report();
        tpkit::Reading reading;
        reading.counter_labels = {"event"};
        if (key_.source != TPKIT_KEY_NONE)
            reading.counter_labels.push_back(key_.name());
        for (const Row& r : rows) {
            const auto& plan = plans_[r.event];
            std::vector<tpkit::Label> labels{{"event", plan.name.str()}};
            if (key_.source != TPKIT_KEY_NONE)
                labels.push_back({key_.name(), r.key, tpkit::key_is_number(key_, plan.format)});
            reading.metrics.push_back({"count", "", "", std::move(labels), r.count});
        }
        return reading;
    }

private:
    const std::vector<tpkit::EventPlan>& plans_;
    const tpkit::KeyChoice& key_;
    const Options& options_;
    tpcount_bpf& skel_;
    tpkit::SwappedMap by_key_;
    std::vector<std::uint64_t> previous_;
    tpkit::MissedWatch missed_{"tpcount", skel_.maps.tpkit_missed,
                               fmt::format("more than {} keys (see --max-keys)", options_.max_keys)};
};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tpcount", "Count the events of any tracepoints, in the kernel.", examples);
    Options options;
    cli.app().add_option("--by", options.by, "count by comm, pid, tid, cpu or FIELD");
    cli.app().add_option("--filter", options.filter,
                         "only events matching this expression (the kernel's filter grammar)");
    cli.app().add_option("--top", options.top, "print only the N largest counts")
        ->check(CLI::Range(std::size_t(1), std::size_t(1) << 30));
    cli.app().add_option("--max-keys", options.max_keys, "at most N keys with --by (default 10240)")
        ->check(CLI::Range(1u, 1u << 24));
    cli.add_common();
    cli.add_map_memory();
    std::vector<std::string> positionals;
    cli.app()
        .add_option("event", positionals,
                     "tracepoints SYSTEM:EVENT or globs, then [interval] [count]")
        ->required();
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::CommonOptions common = cli.options();
        options.events = tpkit::split_interval_count(positionals, common);
        auto key = tpkit::parse_key(options.by, {TPKIT_KEY_COMM, TPKIT_KEY_PID, TPKIT_KEY_TID,
                                                 TPKIT_KEY_CPU});
        auto plans = tpkit::plan_events(tpkit::live_events_root(), options.events, options.filter);
        for (auto& plan : plans)
            tpkit::configure_key(plan.config, key, plan.format);

        std::vector<tpkit::Skeleton<tpcount_bpf>> instances;
        std::vector<tpkit::Link> links;
        for (const auto& plan : plans) {
            auto skel = tpkit::Skeleton<tpcount_bpf>::open("tpcount");
            skel->rodata->tpkit_filter = plan.filter;
            skel->rodata->tpkit_config = plan.config;
            tpkit::apply_task_filters(*skel, common);
            tpkit::check_libbpf(bpf_map__set_max_entries(skel->maps.totals,
                                                         static_cast<std::uint32_t>(plans.size())),
                                "cannot size tpcount's totals");
            auto by_key = CountCollector::keyed_counts(*skel);
            if (key.source != TPKIT_KEY_NONE)
                by_key.set_max_entries(options.max_keys);
            if (!instances.empty()) {
                const auto& first = instances.front();
                tpkit::share_map(first->maps.totals, skel->maps.totals);
                by_key.share(CountCollector::keyed_counts(*first));
                tpkit::share_map(first->maps.tpkit_missed, skel->maps.tpkit_missed);
            }
            if (instances.empty()) // counted on the first, before anything is loaded
                tpkit::raise_fd_limit_for(plans.size(), skel->obj);
            skel.load();
            links.push_back(tpkit::attach_tracepoint(skel->progs.count_event, plan.name.system,
                                                     plan.name.event));
            instances.push_back(std::move(skel));
        }

        CountCollector printer(plans, key, options, *instances.front());
        tpkit::StopSignal stop(common.duration);
        tpkit::run_aggregate(common, stop, [&] { return printer.collect(); });
        tpkit::detach_all(links);
    });
}
