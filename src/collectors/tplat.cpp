// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/tplat.hpp"

#include "collectors/engine_hists.hpp"
#include "collectors/engine_keys.hpp"
#include "collectors/tphist.hpp" // add_bucket_options, configure_buckets

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/run/task_filters.hpp>
// After the tpkit headers: the skeleton's rodata uses their structs.
#include "tplat.skel.h"

#include <fmt/core.h>

#include <optional>
#include <string_view>
#include <vector>

namespace tpkit::tplat {
namespace {

// --match: the field of the start and the field of the end that must be equal.
struct MatchFields {
    std::string start;
    std::string end;
};

// "FIELD" (the same name in both events) or "A==B", each side FIELD or EVENT.FIELD, EVENT being
// the event's name with or without its system ("block_rq_issue.sector"). Unprefixed sides are
// the start's field, then the end's; prefixed ones say whose they are, in either order.
// Anything else, or a prefix naming neither event → Error(usage).
MatchFields parse_match(std::string_view text, const TracepointName& start,
                        const TracepointName& end)
{
    auto bad = [&](std::string_view why) {
        return Error(Exit::usage, fmt::format("bad --match '{}': {}", text, why));
    };
    auto trim = [](std::string_view s) {
        while (!s.empty() && s.front() == ' ')
            s.remove_prefix(1);
        while (!s.empty() && s.back() == ' ')
            s.remove_suffix(1);
        return s;
    };
    auto names = [](std::string_view event, const TracepointName& name) {
        return event == name.event || event == name.str();
    };
    std::size_t eq = text.find("==");
    std::string_view sides[2] = {trim(text.substr(0, eq)),
                                 eq == std::string_view::npos ? trim(text) : trim(text.substr(eq + 2))};
    MatchFields fields;
    std::string* owners[2] = {&fields.start, &fields.end};
    for (int i = 0; i < 2; i++) {
        std::string_view side = sides[i];
        std::size_t dot = side.rfind('.');
        std::string_view field = dot == std::string_view::npos ? side : side.substr(dot + 1);
        if (field.empty() || field.find_first_of(" =.") != std::string_view::npos)
            throw bad("expected FIELD or START_FIELD==END_FIELD (each may be EVENT.FIELD)");
        std::string* owner = owners[i];
        if (dot != std::string_view::npos) {
            std::string_view event = side.substr(0, dot);
            bool is_start = names(event, start), is_end = names(event, end);
            if (!is_start && !is_end)
                throw bad(fmt::format("'{}' is neither {} nor {}", event, start.str(), end.str()));
            if (is_start != is_end)
                owner = is_start ? &fields.start : &fields.end;
        }
        if (!owner->empty())
            throw bad("both sides name the same event");
        *owner = std::string(field);
    }
    return fields;
}

// The match field NAME of an event: an integer.
tpkit_field_spec match_field(const EventFormat& format, std::string_view name)
{
    const Field& f = find_field(format, name);
    if (header_field(f) != HeaderField::none)
        throw Error(Exit::usage, fmt::format("--match: '{}' is a common field, which BPF cannot "
                                             "read; without --match, events match by thread",
                                             f.name));
    if (!is_numeric(f))
        throw Error(Exit::usage,
                    fmt::format("--match: field '{}' of {} is '{}' ({} bytes): matching needs a 1, "
                                "2, 4 or 8-byte integer field",
                                f.name, format.system + ":" + format.name, f.type, f.size));
    return field_spec(f);
}

// Both events, checked and configured from tplat's options before anything opens.
struct Plan {
    KeyChoice key;
    std::vector<EventPlan> start, end; // one event each
    std::uint64_t ns_per_unit = 0;     // --unit's

    EventPlan& start_event() { return start.at(0); }
    EventPlan& end_event() { return end.at(0); }
    const EventPlan& start_event() const { return start.at(0); }
    const EventPlan& end_event() const { return end.at(0); }
};

Plan plan(const Options& options)
{
    Plan plan;
    plan.key = parse_key(options.by, {TPKIT_KEY_COMM, TPKIT_KEY_PID, TPKIT_KEY_TID});
    plan.start = plan_events(live_events_root(), {options.start}, options.start_filter, 1);
    plan.end = plan_events(live_events_root(), {options.end}, options.end_filter, 1);
    EventPlan& start = plan.start_event();
    EventPlan& end = plan.end_event();
    if (start.name.str() == end.name.str())
        throw Error(Exit::usage, fmt::format("START and END are both {}: an interval needs two "
                                             "events",
                                             start.name.str()));
    configure_key(start.config, plan.key, start.format);
    // The end adds to the histograms: it needs to know whether they are keyed, not the key.
    end.config.key_parts = plan.key.bits();
    if (!options.match.empty()) {
        MatchFields fields = parse_match(options.match, start.name, end.name);
        start.config.value = match_field(start.format, fields.start);
        end.config.value = match_field(end.format, fields.end);
    }
    tphist::configure_buckets(end.config, options.linear, options.loglinear);
    plan.ns_per_unit = time_unit_ns(options.unit);
    return plan;
}

// An instance of the engine for one of the two events.
Skeleton<tplat_bpf> opened(const Cli& cli, const Options& options, const Plan& plan,
                           const EventPlan& event, bool is_end)
{
    auto skel = Skeleton<tplat_bpf>::open(cli.name());
    skel->rodata->tpkit_filter = event.filter;
    skel->rodata->tpkit_config = event.config;
    skel->rodata->tplat_is_end = is_end;
    skel->rodata->tplat_by_thread = options.match.empty();
    skel->rodata->tplat_unit_ns = plan.ns_per_unit;
    return skel;
}

// The start's instance, loaded: it keeps the pending starts, of the task filters' tasks.
Skeleton<tplat_bpf> loaded_start(const Cli& cli, const Options& options, const Plan& plan)
{
    auto skel = opened(cli, options, plan, plan.start_event(), false);
    apply_task_filters(*skel, cli.options()); // the task of the start
    if (bpf_map__set_max_entries(skel->maps.pending, options.max_pending))
        throw Error(Exit::failure, "cannot size the map of pending starts");
    EngineHists::size_keyed_maps(*skel, 0, plan.start_event().config.hist_layout); // adds to none
    EngineKeyLabels::configure(*skel, plan.key, 1, true, options.max_keys);
    raise_fd_limit_for(2, skel->obj);
    skel.load();
    return skel;
}

// The end's instance, loaded: it takes the start's pending starts and adds to the histograms.
Skeleton<tplat_bpf> loaded_end(const Cli& cli, const Options& options, const Plan& plan,
                               tplat_bpf& start)
{
    auto skel = opened(cli, options, plan, plan.end_event(), true);
    share_map(start.maps.pending, skel->maps.pending);
    EngineHists::size_keyed_maps(*skel, plan.key.empty() ? 0 : options.max_keys,
                                 plan.end_event().config.hist_layout);
    EngineKeyLabels::configure(*skel, {}, 1, false, 1);
    skel.load();
    return skel;
}

// The histograms of the time from each start to its end, in the end's instance; keyed by the
// start's task or fields, which the start's instance keeps.
class Collector : public MetricCollector {
public:
    Collector(const Cli& cli, const Options& options)
        : plan_(plan(options)), start_skel_(loaded_start(cli, options, plan_)),
          end_skel_(loaded_end(cli, options, plan_, *start_skel_)),
          event_(plan_.start_event().name.str() + " -> " + plan_.end_event().name.str()),
          unit_(time_unit_name(options.unit)),
          restart_what_(options.match.empty() ? "thread" : "value"),
          pending_full_("tplat", start_skel_->maps.pending_full,
                        fmt::format("more than {} starts waiting for their end (see --max-pending)",
                                    options.max_pending)),
          restarts_(start_skel_->maps.restarts),
          missed_("tplat", end_skel_->maps.tpkit_missed,
                  fmt::format("more than {} keys (see --max-keys)", options.max_keys))
    {
        const EventPlan& start = plan_.start_event();
        const EventPlan& end = plan_.end_event();
        links_.push_back(attach_tracepoint(end_skel_->progs.lat_event, end.name.system, end.name.event));
        links_.push_back(
            attach_tracepoint(start_skel_->progs.lat_event, start.name.system, start.name.event));
        // Both at once, so that no end is taken without its start's instance counting too.
        start_skel_->bss->tpkit_engine_armed = true;
        end_skel_->bss->tpkit_engine_armed = true;
        hists_.emplace(*end_skel_, "tplat", end.config, plan_.key, start.format,
                       EngineKeyLabels("tplat", plan_.key, *start_skel_));
    }

    ~Collector() override { detach_all(links_); }

    Reading collect(Drain drain) override
    {
        Reading reading;
        hists_->collect_into(reading, drain, event_, unit_, unit_);
        pending_full_.report();
        missed_.report();
        if (std::uint64_t n = restarts_.increase())
            fmt::print(stderr,
                       "tplat: {} starts replaced an earlier start of the same {} that had not "
                       "ended: those earlier starts are not counted\n",
                       n, restart_what_);
        return reading;
    }

    std::uint64_t uncounted() const override
    {
        return pending_full_.total() + restarts_.seen() + missed_.total();
    }

    std::vector<bpf_object*> objects() const override { return {start_skel_->obj, end_skel_->obj}; }

private:
    Plan plan_;
    Skeleton<tplat_bpf> start_skel_;
    Skeleton<tplat_bpf> end_skel_;
    std::vector<Link> links_;
    std::string event_;
    std::string unit_;
    std::string restart_what_;
    MissedWatch pending_full_;
    CounterWatch restarts_;
    MissedWatch missed_;
    std::optional<EngineHists> hists_; // once attached
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    cli.option("start", options.start, "the event that starts the interval, SYSTEM:EVENT")
        .required();
    cli.option("end", options.end, "the event that ends it, SYSTEM:EVENT").required();
    cli.option("--match", options.match,
               "pair START and END by FIELD (of both) or START_FIELD==END_FIELD "
               "(each may be EVENT.FIELD) instead of by thread")
        .type_name("FIELDS")
        .complete("@match");
    cli.option("--start-filter", options.start_filter,
               "only START events matching this expression (the kernel's filter grammar)")
        .type_name("EXPR");
    cli.option("--end-filter", options.end_filter,
               "only END events matching this expression")
        .type_name("EXPR");
    cli.option("--by", options.by,
               "one histogram per comm, pid, tid or FIELD of the START event")
        .type_name("KEYS")
        .complete("comm pid tid @fields");
    cli.option("--unit", options.unit, "the histogram's unit: ns, us (default) or ms")
        .one_of({"ns", "us", "ms"});
    tphist::add_bucket_options(cli, options.linear, options.loglinear,
                               "linear buckets from MIN to MAX, STEP wide (in --unit), instead of log2");
    cli.option("--max-keys", options.max_keys, "at most N keys with --by (default 1024)")
        .type_name("N")
        .range(1u, 1u << 20);
    cli.option("--max-pending", options.max_pending,
               "at most N starts waiting for their end (default 10240); more are counted "
               "and reported")
        .type_name("N")
        .range(1u, 1u << 24);
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::tplat
