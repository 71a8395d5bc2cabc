// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tphist's collector: an in-kernel histogram of one integer field of any tracepoint; for its main
// and for the exporter.
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
#include "tphist.skel.h"
#include "engine_hists.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <optional>

namespace tpkit::tphist {

struct Options {
    std::string event;
    std::string field; // FIELD, FIELD*N or FIELD/N
    std::string unit;  // --unit ns|us|ms of a field in nanoseconds; empty: the field's own
    std::string linear;
    unsigned loglinear = 0;
    std::string by;
    std::string filter;
    std::uint32_t max_keys = 1024;
    std::uint32_t stack_storage = 16384;
    bool classic = false;
};

// "MIN,MAX,STEP"
inline LinearRange parse_linear(const std::string& text)
{
    std::uint64_t v[3];
    std::size_t at = 0;
    for (int i = 0; i < 3; i++) {
        std::size_t end = text.find(',', at);
        std::string part = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
        bool digits = !part.empty() && part.size() <= 19 &&
                      part.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || (i < 2) == (end == std::string::npos))
            throw Error(Exit::usage,
                               fmt::format("bad --linear '{}': expected MIN,MAX,STEP", text));
        v[i] = std::stoull(part);
        at = end + 1;
    }
    return linear_range(v[0], v[1], v[2]);
}

// What tphist measures: a field times or divided by a constant.
struct ValueExpr {
    std::string field;
    std::uint64_t multiplier = 1;
    std::uint64_t divisor = 1;
};

// "FIELD", "FIELD*N" or "FIELD/N" (N a positive integer).
inline ValueExpr parse_value(std::string_view text)
{
    auto trim = [](std::string_view t) {
        while (!t.empty() && t.front() == ' ')
            t.remove_prefix(1);
        while (!t.empty() && t.back() == ' ')
            t.remove_suffix(1);
        return t;
    };
    ValueExpr value;
    std::size_t op = text.find_first_of("*/");
    value.field = std::string(trim(text.substr(0, op)));
    if (op == std::string_view::npos)
        return value;
    std::string_view number = trim(text.substr(op + 1));
    bool digits = !number.empty() && number.size() <= 19 &&
                  number.find_first_not_of("0123456789") == std::string_view::npos;
    std::uint64_t n = digits ? std::stoull(std::string(number)) : 0;
    if (value.field.empty() || n == 0)
        throw Error(Exit::usage, fmt::format("bad value '{}': expected FIELD, FIELD*N or FIELD/N "
                                             "with N a positive integer",
                                             text));
    (text[op] == '*' ? value.multiplier : value.divisor) = n;
    return value;
}

// Whether the event says its field NAME is in nanoseconds: a name ending in "_ns" or "_nsec",
// or a print format that writes "NAME=%… [ns]" (sched_stat_runtime's runtime).
inline bool in_nanoseconds(const EventFormat& format, std::string_view name)
{
    auto ends_with = [&](std::string_view suffix) {
        return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
    };
    if (ends_with("_ns") || ends_with("_nsec"))
        return true;
    std::string_view fmt = format.print_fmt;
    std::string conversion = std::string(name) + "=%";
    for (std::size_t at = fmt.find(conversion); at != std::string_view::npos;
         at = fmt.find(conversion, at + 1)) {
        if (at > 0 && (std::isalnum(static_cast<unsigned char>(fmt[at - 1])) || fmt[at - 1] == '_'))
            continue;
        std::size_t end = fmt.find(' ', at);
        if (end != std::string_view::npos && fmt.substr(end, 5) == " [ns]")
            return true;
    }
    return false;
}

// --linear MIN,MAX,STEP and --loglinear K, one or the other; `linear_description` says what
// MIN, MAX and STEP are in.
inline void add_bucket_options(Cli& cli, std::string& linear, unsigned& loglinear,
                               const std::string& linear_description)
{
    auto linear_option = cli.option("--linear", linear, linear_description).type_name("MIN,MAX,STEP");
    cli.option("--loglinear", loglinear, "split each power of two into 2^K buckets (K = 1..4)")
        .type_name("K")
        .range(1u, 4u)
        .excludes(linear_option);
}

// The bucket layout of --linear MIN,MAX,STEP or --loglinear K (log2 when neither) into config.
inline void configure_buckets(tpkit_engine_config& config, const std::string& linear,
                              unsigned loglinear)
{
    if (!linear.empty()) {
        auto range = parse_linear(linear);
        config.hist_layout = TPKIT_HIST_LINEAR;
        config.linear_min = range.min;
        config.linear_max = range.max;
        config.linear_step = range.step;
    } else if (loglinear) {
        config.hist_layout = TPKIT_HIST_LOGLINEAR;
        config.sub_bits = static_cast<std::uint8_t>(loglinear_sub_bits(loglinear));
    }
}

class HistCollector {
public:
    HistCollector(const EventPlan& plan, const KeyChoice& key, const Options& options,
                  tphist_bpf& skel)
        : plan_(plan), options_(options), skel_(skel),
          hists_(skel, "tphist", plan.config, key, plan.format, EngineKeyLabels("tphist", key, skel))
    {
    }

    // The histograms since the previous call.
    Reading collect(Drain drain)
    {
        Reading reading;
        hists_.collect_into(reading, drain, plan_.name.str(), options_.field,
                            options_.unit.empty() ? "" : time_unit_name(options_.unit));
        report_outside();
        return reading;
    }

    std::uint64_t uncounted() const { return negatives_.seen() + missed_.total(); }

private:
    // Values no bucket holds are said, on stderr, rather than dropped in silence.
    void report_outside()
    {
        if (std::uint64_t n = negatives_.increase())
            fmt::print(stderr, "tphist: {} negative values of {} not counted\n", n,
                       parse_value(options_.field).field);
        missed_.report();
    }

    const EventPlan& plan_;
    Options options_;
    tphist_bpf& skel_;
    EngineHists hists_;
    CounterWatch negatives_{skel_.maps.negatives};
    MissedWatch missed_{"tphist", skel_.maps.tpkit_missed,
                        fmt::format("more than {} keys (see --max-keys)", options_.max_keys)};
};

// Plans the event (its field, --by, --filter, the buckets), then loads and attaches.
inline std::unique_ptr<Collector> open(const Cli& cli, const Options& options)
{
    struct State {
        std::vector<EventPlan> plans;
        KeyChoice key;
        std::optional<Skeleton<tphist_bpf>> skel;
        Link link{nullptr, bpf_link__destroy};
        std::optional<HistCollector> hists;
    };
    auto state = std::make_shared<State>();
    state->key = parse_key(options.by, {TPKIT_KEY_COMM, TPKIT_KEY_PID, TPKIT_KEY_TID, TPKIT_KEY_CPU,
                                        TPKIT_KEY_KSTACK, TPKIT_KEY_USTACK});
    state->plans = plan_keyed_events(live_events_root(), {options.event}, options.filter, state->key, 1);
    const KeyChoice& key = state->key;
    EventPlan& plan = state->plans.at(0);
    const ValueExpr value = parse_value(options.field);
    configure_value(plan.config, plan.format, value.field);
    std::uint64_t divisor = value.divisor;
    if (!options.unit.empty()) {
        if (!in_nanoseconds(plan.format, value.field))
            throw Error(Exit::usage,
                        fmt::format("--unit {}: {} does not say that '{}' is in nanoseconds; "
                                    "scale it yourself ('{}/1000')",
                                    options.unit, plan.name.str(), value.field, value.field));
        divisor *= time_unit_ns(options.unit);
    }
    configure_key(plan.config, key, plan.format);
    configure_buckets(plan.config, options.linear, options.loglinear);

    const InstancePlan instance = plan_instances(state->plans, options.classic).at(0);
    auto skel = Skeleton<tphist_bpf>::open(cli.name());
    skel->rodata->tpkit_filter = instance.filter;
    skel->rodata->tpkit_config = instance.config;
    skel->rodata->tphist_multiplier = value.multiplier;
    skel->rodata->tphist_multiply_limit = UINT64_MAX / value.multiplier;
    skel->rodata->tphist_divisor = divisor;
    EnginePrograms programs{skel->progs.hist_event, skel->progs.hist_syscall,
                            skel->maps.tpkit_syscall_events, skel->maps.tpkit_filter_user_str};
    prepare_instance(programs, instance);
    apply_task_filters(*skel, cli.options());
    EngineHists::size_keyed_maps(*skel, key.empty() ? 0 : options.max_keys,
                                 plan.config.hist_layout);
    EngineKeyLabels::configure(*skel, key, options.stack_storage, true, options.max_keys);
    raise_fd_limit_for(1, skel->obj);
    skel.load();
    state->link = attach_instance(programs, instance, state->plans);
    skel->bss->tpkit_engine_armed = true;
    state->skel.emplace(std::move(skel));
    state->hists.emplace(plan, key, options, **state->skel);
    State& s = *state;
    return std::make_unique<CollectorOf>(
        state, std::vector<bpf_object*>{(*s.skel)->obj}, [&s](Drain drain) { return s.hists->collect(drain); },
        [&s] { return s.hists->uncounted(); });
}

} // namespace tpkit::tphist
