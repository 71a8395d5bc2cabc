// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tplat's collector: the time from one tracepoint to another of the same thread, or of the same
// value of a field of each, as in-kernel histograms; for its main and for the exporter.
#pragma once

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/stream.hpp>
// After the tpkit headers: the skeleton's rodata uses their structs.
#include "tplat.skel.h"
#include "engine_hists.hpp"
#include "tphist.hpp" // configure_buckets

#include <fmt/core.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tpkit::tplat {

struct Options {
    std::string start;
    std::string end;
    std::string match; // empty: the same thread
    std::string start_filter;
    std::string end_filter;
    std::string by;
    std::string unit = "us";
    std::string linear;
    unsigned loglinear = 0;
    std::uint32_t max_keys = 1024;
    std::uint32_t max_pending = 10240;
};

// START, END and tplat's own options (not the common ones, nor [interval] [count]).
inline void add_options(Cli& cli, Options& options)
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

// --match: the field of the start and the field of the end that must be equal.
struct MatchFields {
    std::string start;
    std::string end;
};

// "FIELD" (the same name in both events) or "A==B", each side FIELD or EVENT.FIELD, EVENT being
// the event's name with or without its system ("block_rq_issue.sector"). Unprefixed sides are
// the start's field, then the end's; prefixed ones say whose they are, in either order.
// Anything else, or a prefix naming neither event → Error(usage).
inline MatchFields parse_match(std::string_view text, const TracepointName& start,
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

class LatencyCollector {
public:
    LatencyCollector(const EventPlan& start, const EventPlan& end, const KeyChoice& key,
                     const Options& options, tplat_bpf& start_skel, tplat_bpf& end_skel)
        : event_(start.name.str() + " -> " + end.name.str()), unit_(time_unit_name(options.unit)),
          hists_(end_skel, "tplat", end.config, key, start.format,
                 EngineKeyLabels("tplat", key, start_skel)),
          pending_full_("tplat", start_skel.maps.pending_full,
                        fmt::format("more than {} starts waiting for their end (see --max-pending)",
                                    options.max_pending)),
          restarts_(start_skel.maps.restarts),
          missed_("tplat", end_skel.maps.tpkit_missed,
                  fmt::format("more than {} keys (see --max-keys)", options.max_keys)),
          restart_what_(options.match.empty() ? "thread" : "value")
    {
    }

    // The histograms since the previous call.
    Reading collect(Drain drain)
    {
        Reading reading;
        hists_.collect_into(reading, drain, event_, unit_, unit_);
        pending_full_.report();
        missed_.report();
        if (std::uint64_t n = restarts_.increase())
            fmt::print(stderr,
                       "tplat: {} starts replaced an earlier start of the same {} that had not "
                       "ended: those earlier starts are not counted\n",
                       n, restart_what_);
        return reading;
    }

    std::uint64_t uncounted() const
    {
        return pending_full_.total() + restarts_.seen() + missed_.total();
    }

private:
    std::string event_;
    std::string unit_;
    EngineHists hists_;
    MissedWatch pending_full_;
    CounterWatch restarts_;
    MissedWatch missed_;
    std::string restart_what_;
};

// The match field NAME of an event: an integer.
inline tpkit_field_spec match_field(const EventFormat& format, std::string_view name)
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

// Plans both events (their filters, --match, --by, the buckets), then loads and attaches an
// instance of the engine for each.
inline std::unique_ptr<Collector> open(const Cli& cli, const Options& options)
{
    struct State {
        std::vector<EventPlan> start, end;
        KeyChoice key;
        std::optional<Skeleton<tplat_bpf>> start_skel, end_skel;
        std::vector<Link> links;
        std::optional<LatencyCollector> latency;
        ~State() { detach_all(links); }
    };
    auto state = std::make_shared<State>();
    state->key = parse_key(options.by, {TPKIT_KEY_COMM, TPKIT_KEY_PID, TPKIT_KEY_TID});
    state->start = plan_events(live_events_root(), {options.start}, options.start_filter, 1);
    state->end = plan_events(live_events_root(), {options.end}, options.end_filter, 1);
    EventPlan& start = state->start.at(0);
    EventPlan& end = state->end.at(0);
    if (start.name.str() == end.name.str())
        throw Error(Exit::usage, fmt::format("START and END are both {}: an interval needs two "
                                             "events",
                                             start.name.str()));
    const KeyChoice& key = state->key;
    configure_key(start.config, key, start.format);
    // The end adds to the histograms: it needs to know whether they are keyed, not the key.
    end.config.key_parts = key.bits();
    if (!options.match.empty()) {
        MatchFields fields = parse_match(options.match, start.name, end.name);
        start.config.value = match_field(start.format, fields.start);
        end.config.value = match_field(end.format, fields.end);
    }
    tphist::configure_buckets(end.config, options.linear, options.loglinear);
    const std::uint64_t ns_per_unit = time_unit_ns(options.unit);

    auto open_instance = [&](EventPlan& plan, bool is_end) {
        auto skel = Skeleton<tplat_bpf>::open(cli.name());
        skel->rodata->tpkit_filter = plan.filter;
        skel->rodata->tpkit_config = plan.config;
        skel->rodata->tplat_is_end = is_end;
        skel->rodata->tplat_by_thread = options.match.empty();
        skel->rodata->tplat_unit_ns = ns_per_unit;
        return skel;
    };
    auto start_skel = open_instance(start, false);
    apply_task_filters(*start_skel, cli.options()); // the task of the start
    if (bpf_map__set_max_entries(start_skel->maps.pending, options.max_pending))
        throw Error(Exit::failure, "cannot size the map of pending starts");
    EngineHists::size_keyed_maps(*start_skel, 0, start.config.hist_layout); // adds to none
    EngineKeyLabels::configure(*start_skel, key, 1, true, options.max_keys);
    raise_fd_limit_for(2, start_skel->obj);
    start_skel.load();
    auto end_skel = open_instance(end, true);
    share_map(start_skel->maps.pending, end_skel->maps.pending);
    EngineHists::size_keyed_maps(*end_skel, key.empty() ? 0 : options.max_keys,
                                 end.config.hist_layout);
    EngineKeyLabels::configure(*end_skel, {}, 1, false, 1);
    end_skel.load();
    state->links.push_back(attach_tracepoint(end_skel->progs.lat_event, end.name.system, end.name.event));
    state->links.push_back(
        attach_tracepoint(start_skel->progs.lat_event, start.name.system, start.name.event));
    // Both at once, so that no end is taken without its start's instance counting too.
    start_skel->bss->tpkit_engine_armed = true;
    end_skel->bss->tpkit_engine_armed = true;
    state->start_skel.emplace(std::move(start_skel));
    state->end_skel.emplace(std::move(end_skel));
    State& s = *state;
    s.latency.emplace(start, end, key, options, **s.start_skel, **s.end_skel);
    return std::make_unique<CollectorOf>(
        state, std::vector<bpf_object*>{(*s.start_skel)->obj, (*s.end_skel)->obj},
        [&s](Drain drain) { return s.latency->collect(drain); }, [&s] { return s.latency->uncounted(); });
}

} // namespace tpkit::tplat
