// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/tpcount.hpp"

#include "collectors/engine_keys.hpp"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/process/stop.hpp>
#include <tpkit/run/task_filters.hpp>
// After the tpkit headers: the skeleton's rodata uses their structs.
#include "tpcount.skel.h"

#include <fmt/core.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <tuple>
#include <utility>

namespace tpkit::tpcount {
namespace {

struct Row {
    std::uint32_t event;
    std::vector<Label> key;
    std::uint64_t count;
};

SwappedMap keyed_counts(tpcount_bpf& skel)
{
    return {skel.maps.by_key, skel.maps.by_key_a, skel.maps.by_key_b};
}

// The engine's instances as attached; destroyed, their programs are disarmed, then their links
// detached all at once (detach_all): also when attaching stopped midway.
struct Instances {
    std::vector<Skeleton<tpcount_bpf>> skels;
    std::vector<Link> links;

    ~Instances()
    {
        arm_instances(skels, false);
        detach_all(links); // many at once: each waits for a grace period
    }
};

// The counts of every instance, in maps they share: the totals per event, or by --by's key.
class Collector : public MetricCollector {
public:
    Collector(const Cli& cli, const Options& options) : options_(options)
    {
        key_ = parse_key(options.by, {TPKIT_KEY_COMM, TPKIT_KEY_PID, TPKIT_KEY_TID, TPKIT_KEY_CPU,
                                      TPKIT_KEY_KSTACK, TPKIT_KEY_USTACK});
        plans_ = plan_keyed_events(live_events_root(), options.events,
                                   EventFilters(options.filters), key_);
        for (auto& plan : plans_)
            configure_key(plan.config, key_, plan.format);

        auto& instances = instances_.skels;
        auto planned = plan_instances(plans_, options.classic);
        if (planned.size() >= many_events && !StopBeforeLoad::active())
            fmt::print(stderr, "{}: attaching {} tracepoints…\n", cli.name(), planned.size());
        for (const auto& instance : planned) {
            if (!instances.empty() && stop_pending())
                break; // Ctrl-C while attaching: what is attached runs to the (empty) end at once
            auto skel = Skeleton<tpcount_bpf>::open(cli.name());
            skel->rodata->tpkit_filter = instance.filter;
            skel->rodata->tpkit_config = instance.config;
            EnginePrograms programs{skel->progs.count_event, skel->progs.count_syscall,
                                    skel->maps.tpkit_syscall_events,
                                    skel->maps.tpkit_filter_user_str};
            prepare_instance(programs, instance);
            apply_task_filters(*skel, cli.options());
            check_libbpf(bpf_map__set_max_entries(skel->maps.totals,
                                                  static_cast<std::uint32_t>(plans_.size())),
                         "cannot size tpcount's totals");
            auto by_key = keyed_counts(*skel);
            if (!key_.empty())
                by_key.set_max_entries(options.max_keys);
            else
                by_key.leave_out();
            EngineKeyLabels::configure(*skel, key_, options.stack_storage, false, options.max_keys);
            if (!instances.empty()) {
                const auto& first = instances.front();
                share_map(first->maps.totals, skel->maps.totals);
                if (!key_.empty())
                    by_key.share(keyed_counts(*first));
                share_map(first->maps.tpkit_missed, skel->maps.tpkit_missed);
                share_map(first->maps.tpkit_stacks, skel->maps.tpkit_stacks);
                share_map(first->maps.tpkit_stack_errors, skel->maps.tpkit_stack_errors);
            }
            if (instances.empty()) // counted on the first, before anything is loaded
                raise_fd_limit_for(planned.size(), skel->obj);
            skel.load();
            instances_.links.push_back(attach_instance(programs, instance, plans_));
            instances.push_back(std::move(skel));
        }
        say_attached_before_stop(cli.name(), instances.size(), planned.size());
        arm_instances(instances, true);

        tpcount_bpf& first = *instances.front();
        totals_ = first.maps.totals;
        by_key_.emplace(keyed_counts(first));
        labels_.emplace("tpcount", key_, first);
        missed_.emplace("tpcount", first.maps.tpkit_missed,
                        fmt::format("more than {} keys (see --max-keys)", options.max_keys));
    }

    Reading collect(Drain drain) override
    {
        std::vector<Row> rows = key_.empty() ? total_rows() : keyed_rows(drain);
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
        missed_->report();
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

    std::uint64_t uncounted() const override { return missed_->total(); }

    std::vector<bpf_object*> objects() const override
    {
        std::vector<bpf_object*> objects;
        for (const auto& skel : instances_.skels)
            objects.push_back(skel->obj);
        return objects;
    }

private:
    // The growth of each event's total since the previous call: an event that did not grow is
    // left out, unless it is the only one.
    std::vector<Row> total_rows()
    {
        std::vector<Row> rows;
        auto totals = sum_percpu_array(totals_);
        previous_.resize(totals.size());
        for (std::uint32_t i = 0; i < totals.size() && i < plans_.size(); i++) {
            std::uint64_t count = totals[i].at(0) - std::exchange(previous_[i], totals[i].at(0));
            if (count || plans_.size() == 1)
                rows.push_back({i, {}, count});
        }
        return rows;
    }

    std::vector<Row> keyed_rows(Drain drain)
    {
        std::vector<Row> rows;
        for (const auto& entry : by_key_->drain(drain)) {
            const auto k = entry.key_as<tpkit_engine_key>();
            note_cut_key("tpcount", k, key_);
            if (k.event >= plans_.size())
                continue;
            rows.push_back({k.event, labels_->labels(k, plans_[k.event].format),
                            entry.counters.at(0)});
        }
        labels_->end_interval();
        return rows;
    }

    Options options_;
    KeyChoice key_;
    std::vector<EventPlan> plans_;
    Instances instances_;
    // Read through the first instance's maps, which the others share.
    bpf_map* totals_ = nullptr;
    std::optional<SwappedMap> by_key_;
    std::optional<EngineKeyLabels> labels_;
    std::optional<MissedWatch> missed_;
    std::vector<std::uint64_t> previous_;
};

} // namespace

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::tpcount
