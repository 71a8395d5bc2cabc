// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/tphist.hpp"

#include "collectors/engine_hists.hpp"
#include "collectors/engine_keys.hpp"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/run/task_filters.hpp>
// After the tpkit headers: the skeleton's rodata uses their structs.
#include "tphist.skel.h"

#include <fmt/core.h>

#include <cctype>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace tpkit::tphist {
namespace {

// What tphist measures: a field times or divided by a constant.
struct ValueExpr {
    std::string field;
    std::uint64_t multiplier = 1;
    std::uint64_t divisor = 1;
};

// "FIELD", "FIELD*N" or "FIELD/N" (N a positive integer).
ValueExpr parse_value(std::string_view text)
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
bool in_nanoseconds(const EventFormat& format, std::string_view name)
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

// What tphist's options ask for, checked against the event's format before anything opens.
struct Plan {
    KeyChoice key;
    std::vector<EventPlan> events; // the one event
    ValueExpr value;
    std::uint64_t divisor = 1; // the value's, times --unit's
    InstancePlan instance;
};

Plan plan(const Options& options)
{
    Plan plan;
    plan.key = parse_key(options.by, {TPKIT_KEY_COMM, TPKIT_KEY_PID, TPKIT_KEY_TID, TPKIT_KEY_CPU,
                                      TPKIT_KEY_KSTACK, TPKIT_KEY_USTACK});
    plan.events = plan_keyed_events(live_events_root(), {options.event}, options.filter, plan.key, 1);
    EventPlan& event = plan.events.at(0);
    plan.value = parse_value(options.field);
    configure_value(event.config, event.format, plan.value.field);
    plan.divisor = plan.value.divisor;
    if (!options.unit.empty()) {
        if (!in_nanoseconds(event.format, plan.value.field))
            throw Error(Exit::usage,
                        fmt::format("--unit {}: {} does not say that '{}' is in nanoseconds; "
                                    "scale it yourself ('{}/1000')",
                                    options.unit, event.name.str(), plan.value.field,
                                    plan.value.field));
        plan.divisor *= time_unit_ns(options.unit);
    }
    configure_key(event.config, plan.key, event.format);
    configure_buckets(event.config, options.linear, options.loglinear);
    plan.instance = plan_instances(plan.events, options.classic).at(0);
    return plan;
}

EnginePrograms programs(tphist_bpf& skel)
{
    return {skel.progs.hist_event, skel.progs.hist_syscall, skel.maps.tpkit_syscall_events,
            skel.maps.tpkit_filter_user_str};
}

// The histogram of the event's field: one, or one per key of --by. Values no bucket holds are
// said, on stderr, rather than dropped in silence.
class Collector : public SkeletonCollector<tphist_bpf> {
public:
    Collector(const Cli& cli, const Options& options) : Collector(cli, options, plan(options)) {}

    Reading collect(Drain drain) override
    {
        Reading reading;
        hists_->collect_into(reading, drain, plan_.events.at(0).name.str(), options_.field,
                             options_.unit.empty() ? "" : time_unit_name(options_.unit));
        if (std::uint64_t n = negatives_.increase())
            fmt::print(stderr, "tphist: {} negative values of {} not counted\n", n,
                       plan_.value.field);
        report_missed();
        return reading;
    }

    std::uint64_t uncounted() const override
    {
        return negatives_.seen() + SkeletonCollector::uncounted();
    }

private:
    Collector(const Cli& cli, const Options& options, Plan plan)
        : SkeletonCollector(opened(cli, options, plan)), options_(options), plan_(std::move(plan)),
          negatives_(skel_->maps.negatives)
    {
        raise_fd_limit_for(1, skel_->obj);
        skel_.load();
        link_ = attach_instance(programs(*skel_), plan_.instance, plan_.events);
        skel_->bss->tpkit_engine_armed = true;
        const EventPlan& event = plan_.events.at(0);
        hists_.emplace(*skel_, "tphist", event.config, plan_.key, event.format,
                       EngineKeyLabels("tphist", plan_.key, *skel_));
        watch_missed(fmt::format("more than {} keys (see --max-keys)", options.max_keys));
    }

    static Skeleton<tphist_bpf> opened(const Cli& cli, const Options& options, const Plan& plan)
    {
        auto skel = Skeleton<tphist_bpf>::open(cli.name());
        skel->rodata->tpkit_filter = plan.instance.filter;
        skel->rodata->tpkit_config = plan.instance.config;
        skel->rodata->tphist_multiplier = plan.value.multiplier;
        skel->rodata->tphist_multiply_limit = UINT64_MAX / plan.value.multiplier;
        skel->rodata->tphist_divisor = plan.divisor;
        prepare_instance(programs(*skel), plan.instance);
        apply_task_filters(*skel, cli.options());
        EngineHists::size_keyed_maps(*skel, plan.key.empty() ? 0 : options.max_keys,
                                     plan.events.at(0).config.hist_layout);
        EngineKeyLabels::configure(*skel, plan.key, options.stack_storage, true, options.max_keys);
        return skel;
    }

    Options options_;
    Plan plan_;
    CounterWatch negatives_;
    Link link_{nullptr, bpf_link__destroy};
    std::optional<EngineHists> hists_; // once loaded
};

} // namespace

LinearRange parse_linear(const std::string& text)
{
    std::uint64_t v[3];
    std::size_t at = 0;
    for (int i = 0; i < 3; i++) {
        std::size_t end = text.find(',', at);
        std::string part = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
        bool digits = !part.empty() && part.size() <= 19 &&
                      part.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || (i < 2) == (end == std::string::npos))
            throw Error(Exit::usage, fmt::format("bad --linear '{}': expected MIN,MAX,STEP", text));
        v[i] = std::stoull(part);
        at = end + 1;
    }
    return linear_range(v[0], v[1], v[2]);
}

void add_bucket_options(Cli& cli, std::string& linear, unsigned& loglinear,
                        const std::string& linear_description)
{
    auto linear_option = cli.option("--linear", linear, linear_description).type_name("MIN,MAX,STEP");
    cli.option("--loglinear", loglinear, "split each power of two into 2^K buckets (K = 1..4)")
        .type_name("K")
        .range(1u, 4u)
        .excludes(linear_option);
}

void configure_buckets(tpkit_engine_config& config, const std::string& linear, unsigned loglinear)
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

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::tphist
