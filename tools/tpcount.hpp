// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpcount's collector: counts of any tracepoints' events, in total or by a key; for its main and
// for the exporter.
#pragma once

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/process/stop.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/stream.hpp>
// After the tpkit headers: the skeleton's rodata uses their structs.
#include "tpcount.skel.h"
#include "engine_keys.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

namespace tpkit::tpcount {

struct Options {
    std::vector<std::string> events;
    std::string by;
    std::vector<std::string> filters; // --filter, each for every event or SYSTEM:EVENT=EXPR
    std::size_t top = 0;
    std::uint32_t max_keys = 10240;
    std::uint32_t stack_storage = 16384;
    bool classic = false;
};

struct Row {
    std::uint32_t event;
    std::vector<Label> key;
    std::uint64_t count;
};

class CountCollector {
public:
    CountCollector(const std::vector<EventPlan>& plans, const KeyChoice& key,
                   const Options& options, tpcount_bpf& skel)
        : plans_(plans), key_(key), options_(options), skel_(skel),
          by_key_(keyed_counts(skel)), labels_("tpcount", key, skel)
    {
    }

    static SwappedMap keyed_counts(tpcount_bpf& skel)
    {
        return {skel.maps.by_key, skel.maps.by_key_a, skel.maps.by_key_b};
    }

    // The counts since the previous call, largest first.
    Reading collect(Drain drain)
    {
        std::vector<Row> rows;
        if (key_.empty()) {
            auto totals = sum_percpu_array(skel_.maps.totals);
            previous_.resize(totals.size());
            for (std::uint32_t i = 0; i < totals.size() && i < plans_.size(); i++) {
                std::uint64_t count = totals[i].at(0) - std::exchange(previous_[i], totals[i].at(0));
                if (count || plans_.size() == 1)
                    rows.push_back({i, {}, count});
            }
        } else {
            for (const auto& entry : by_key_.drain(drain)) {
                const auto k = entry.key_as<tpkit_engine_key>();
                note_cut_key("tpcount", k, key_);
                if (k.event >= plans_.size())
                    continue;
                rows.push_back({k.event, labels_.labels(k, plans_[k.event].format),
                                entry.counters.at(0)});
            }
            labels_.end_interval();
        }
        std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
            if (a.count != b.count)
                return a.count > b.count;
            if (a.event != b.event)
                return std::tie(plans_[a.event].name.system, plans_[a.event].name.event) <
                       std::tie(plans_[b.event].name.system, plans_[b.event].name.event);
            return labels_less(a.key, b.key);
        });
        if (options_.top && rows.size() > options_.top)
            rows.resize(options_.top);
        missed_.report();
        Reading reading;
        // Stacks print folded (flamegraph.pl's input).
        reading.folded = key_.has_stack();
        reading.counter_labels = {"event"};
        for (tpkit_key_source part : key_.parts)
            reading.counter_labels.push_back(key_.name(part));
        for (Row& r : rows) {
            std::vector<Label> labels{{"event", plans_[r.event].name.str()}};
            labels.insert(labels.end(), std::make_move_iterator(r.key.begin()),
                          std::make_move_iterator(r.key.end()));
            reading.metrics.push_back({"count", "", "", std::move(labels), r.count});
        }
        return reading;
    }

    std::uint64_t uncounted() const { return missed_.total(); }
    std::uint64_t stack_errors() const { return labels_.stack_errors(); }

private:
    const std::vector<EventPlan>& plans_;
    const KeyChoice& key_;
    Options options_;
    tpcount_bpf& skel_;
    SwappedMap by_key_;
    EngineKeyLabels labels_;
    std::vector<std::uint64_t> previous_;
    MissedWatch missed_{"tpcount", skel_.maps.tpkit_missed,
                        fmt::format("more than {} keys (see --max-keys)", options_.max_keys)};
};

// Plans the events (globs, --filter, --by), then loads and attaches the engine's instances
// (plan_instances), all sharing their maps.
inline std::unique_ptr<Collector> open(const Cli& cli, const Options& options)
{
    struct State {
        std::vector<EventPlan> plans;
        KeyChoice key;
        std::vector<Skeleton<tpcount_bpf>> instances;
        std::vector<Link> links;
        std::optional<CountCollector> counts;

        ~State()
        {
            arm_instances(instances, false);
            detach_all(links); // many at once: each waits for a grace period
        }
    };
    auto state = std::make_shared<State>();
    state->key = parse_key(options.by, {TPKIT_KEY_COMM, TPKIT_KEY_PID, TPKIT_KEY_TID, TPKIT_KEY_CPU,
                                        TPKIT_KEY_KSTACK, TPKIT_KEY_USTACK});
    state->plans = plan_keyed_events(live_events_root(), options.events, EventFilters(options.filters),
                                     state->key);
    const auto& key = state->key;
    const auto& plans = state->plans;
    for (auto& plan : state->plans)
        configure_key(plan.config, key, plan.format);

    auto& instances = state->instances;
    auto planned = plan_instances(plans, options.classic);
    if (planned.size() >= many_events && !StopBeforeLoad::active())
        fmt::print(stderr, "{}: attaching {} tracepoints…\n", cli.name(), planned.size());
    for (const auto& instance : planned) {
        if (!instances.empty() && stop_pending())
            break; // Ctrl-C while attaching: what is attached runs to the (empty) end at once
        auto skel = Skeleton<tpcount_bpf>::open(cli.name());
        skel->rodata->tpkit_filter = instance.filter;
        skel->rodata->tpkit_config = instance.config;
        EnginePrograms programs{skel->progs.count_event, skel->progs.count_syscall,
                                skel->maps.tpkit_syscall_events, skel->maps.tpkit_filter_user_str};
        prepare_instance(programs, instance);
        apply_task_filters(*skel, cli.options());
        check_libbpf(bpf_map__set_max_entries(skel->maps.totals,
                                              static_cast<std::uint32_t>(plans.size())),
                     "cannot size tpcount's totals");
        auto by_key = CountCollector::keyed_counts(*skel);
        if (!key.empty())
            by_key.set_max_entries(options.max_keys);
        else
            by_key.leave_out();
        EngineKeyLabels::configure(*skel, key, options.stack_storage, false, options.max_keys);
        if (!instances.empty()) {
            const auto& first = instances.front();
            share_map(first->maps.totals, skel->maps.totals);
            if (!key.empty())
                by_key.share(CountCollector::keyed_counts(*first));
            share_map(first->maps.tpkit_missed, skel->maps.tpkit_missed);
            share_map(first->maps.tpkit_stacks, skel->maps.tpkit_stacks);
            share_map(first->maps.tpkit_stack_errors, skel->maps.tpkit_stack_errors);
        }
        if (instances.empty()) // counted on the first, before anything is loaded
            raise_fd_limit_for(planned.size(), skel->obj);
        skel.load();
        state->links.push_back(attach_instance(programs, instance, plans));
        instances.push_back(std::move(skel));
    }
    say_attached_before_stop(cli.name(), instances.size(), planned.size());
    arm_instances(instances, true);
    state->counts.emplace(plans, key, options, *instances.front());
    std::vector<bpf_object*> objects;
    for (const auto& skel : instances)
        objects.push_back(skel->obj);
    State& s = *state;
    return std::make_unique<CollectorOf>(
        state, objects, [&s](Drain drain) { return s.counts->collect(drain); },
        [&s] { return s.counts->uncounted(); });
}

} // namespace tpkit::tpcount
