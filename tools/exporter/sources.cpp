// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "sources.hpp"

#include "collectors/biolatency.hpp"
#include "collectors/hardirqs.hpp"
#include "collectors/netrxlen.hpp"
#include "collectors/runqlat.hpp"
#include "collectors/softirqs.hpp"
#include "collectors/syscount.hpp"
#include "collectors/tpcount.hpp"
#include "collectors/tphist.hpp"
#include "collectors/tplat.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>

namespace tpkit::exporter {

namespace {

// A tool's collector from its own options (and the task filters): parsed always, opened when
// `load`.
using ToolMaker = std::function<std::unique_ptr<MetricCollector>(
    const std::string& name, const std::vector<std::string>& args, bool load)>;

template <class Options, class AddOptions, class Open>
ToolMaker tool(AddOptions add_options, Open open)
{
    return [=](const std::string& name, const std::vector<std::string>& args, bool load)
               -> std::unique_ptr<MetricCollector> {
        Cli cli(name, "", "");
        cli.add_task_filters();
        Options options;
        add_options(cli, options);
        cli.parse_args(args);
        return load ? open(cli, options) : nullptr;
    };
}

const std::map<std::string, ToolMaker>& tools()
{
    static const std::map<std::string, ToolMaker> table = {
        {"biolatency", tool<biolatency::Options>(biolatency::add_options, biolatency::open)},
        {"hardirqs", tool<hardirqs::Options>(hardirqs::add_options, hardirqs::open)},
        {"netrxlen", tool<netrxlen::Options>(netrxlen::add_options, netrxlen::open)},
        {"runqlat", tool<runqlat::Options>(runqlat::add_options, runqlat::open)},
        {"softirqs", tool<softirqs::Options>(softirqs::add_options, softirqs::open)},
        {"tplat", tool<tplat::Options>(tplat::add_options, tplat::open)},
        // Every row: a counter left out of a scrape would look like a reset.
        {"syscount", tool<syscount::Options>(syscount::add_options,
                                             [](const Cli& cli, syscount::Options options) {
                                                 options.top = SIZE_MAX;
                                                 return syscount::open(cli, options);
                                             })},
    };
    return table;
}

// An error of a stage of checking, said with the file, line and key it concerns.
template <class Body>
void at_key(const MetricConfig& m, const std::string& key, Body body)
{
    try {
        body();
    } catch (const Error& e) {
        throw Error(e.code(), m.where(key) + e.what());
    }
}

// The task filters of a count or hist metric (its args), parsed.
std::unique_ptr<Cli> engine_cli(const MetricConfig& m)
{
    auto cli = std::make_unique<Cli>(m.kind == SourceKind::count ? "tpcount" : "tphist", "", "");
    cli->add_task_filters();
    at_key(m, "args", [&] { cli->parse_args(m.args); });
    return cli;
}

tpcount::Options count_options(const MetricConfig& m)
{
    tpcount::Options options;
    options.events = m.events;
    options.by = m.by;
    options.filters = {m.filter};
    options.max_keys = static_cast<std::uint32_t>(m.max_series);
    return options;
}

tphist::Options hist_options(const MetricConfig& m)
{
    tphist::Options options;
    options.event = m.events.at(0);
    options.field = m.field;
    options.linear = m.linear;
    options.loglinear = m.loglinear;
    options.by = m.by;
    options.filter = m.filter;
    options.max_keys = static_cast<std::uint32_t>(m.max_series);
    return options;
}

// Whether the series of a metric keep their "event" label: only where it can differ.
bool labels_event(const MetricConfig& m)
{
    return m.kind == SourceKind::count &&
           (m.events.size() > 1 || std::any_of(m.events.begin(), m.events.end(),
                                               [](const auto& e) { return has_wildcard(e); }));
}

// A source's unit in Prometheus' base units: times in seconds.
std::pair<std::string, double> base_unit(const std::string& unit)
{
    if (unit == "nsecs" || unit == "ns")
        return {"seconds", 1e-9};
    if (unit == "usecs" || unit == "us")
        return {"seconds", 1e-6};
    if (unit == "msecs" || unit == "ms")
        return {"seconds", 1e-3};
    return {unit, 1};
}

std::string default_help(const MetricConfig& m, const Metric& metric)
{
    switch (m.kind) {
    case SourceKind::count:
        return fmt::format("Events of {}", fmt::join(m.events, ", "));
    case SourceKind::hist:
        return fmt::format("{} of {}", m.field, m.events.at(0));
    case SourceKind::tool:
        break;
    }
    return metric.help.empty() ? m.tool + " " + metric.name : metric.help;
}

// The metric's keys against this kernel (its events, fields, filter; a tool's options parsed),
// each error said with the file, line and key it concerns.
void check_keys(const MetricConfig& m)
{
    if (m.kind == SourceKind::tool) {
        auto it = tools().find(m.tool);
        if (it == tools().end())
            throw Error(Exit::unknown_target,
                        m.where("tool") + fmt::format("unknown tool '{}' (the exporter serves {})",
                                                      m.tool, fmt::join(exported_tools(), ", ")));
        at_key(m, "args", [&] { it->second(m.tool, m.args, false); });
        return;
    }
    engine_cli(m);
    const std::string source = m.kind == SourceKind::count ? "count" : "hist";
    std::vector<EventPlan> plans;
    at_key(m, source, [&] { plans = plan_events(live_events_root(), m.events, ""); });
    KeyChoice key;
    at_key(m, "by", [&] {
        key = parse_key(m.by, {TPKIT_KEY_COMM, TPKIT_KEY_PID, TPKIT_KEY_TID, TPKIT_KEY_CPU});
        for (auto& plan : plans)
            configure_key(plan.config, key, plan.format);
    });
    if (m.kind == SourceKind::hist) {
        at_key(m, "field", [&] { configure_value(plans.at(0).config, plans.at(0).format, m.field); });
        at_key(m, "buckets", [&] {
            if (!m.linear.empty())
                tphist::parse_linear(m.linear);
            if (m.loglinear)
                loglinear_sub_bits(m.loglinear);
        });
    }
    at_key(m, "filter", [&] { plan_events(live_events_root(), m.events, m.filter); });
}

// Checks the metric's keys, then opens its engine or tool, which checks the rest (the processes,
// disks, CPUs its options name; the memory of its maps) as it loads and attaches.
std::unique_ptr<MetricCollector> open_collector(const MetricConfig& m)
{
    check_keys(m);
    try {
        switch (m.kind) {
        case SourceKind::count:
            return tpcount::open(*engine_cli(m), count_options(m));
        case SourceKind::hist:
            return tphist::open(*engine_cli(m), hist_options(m));
        case SourceKind::tool:
            return tools().at(m.tool)(m.tool, m.args, true);
        }
    } catch (const Error& e) {
        throw Error(e.code(), fmt::format("{}: metric {}: {}", m.file, m.name, e.what()));
    }
    return nullptr;
}

} // namespace

std::vector<std::string> exported_tools()
{
    std::vector<std::string> names;
    for (const auto& [name, maker] : tools())
        names.push_back(name);
    return names;
}

void check_config(const Config& config)
{
    // As at start: each metric in order, their maps' memory held to the limit together.
    StopBeforeLoad stop;
    for (const MetricConfig& m : config.metrics) {
        try {
            open_collector(m);
        } catch (const StoppedBeforeLoad&) {
        }
    }
}

Source::Source(MetricConfig config) : config_(std::move(config)), collector_(open_collector(config_))
{
}

void Source::scrape(std::vector<MetricFamily>& out)
{
    over_series_limit_ += totals_.add(collector_->collect(tpkit::Drain::interval), config_.max_series);
    const MetricConfig& m = config_;
    std::vector<std::string> measures; // in order of appearance
    for (const Metric& metric : totals_.totals())
        if (std::find(measures.begin(), measures.end(), metric.name) == measures.end())
            measures.push_back(metric.name);
    const bool keep_event = labels_event(m);
    for (const std::string& measure : measures) {
        MetricFamily family;
        double multiplier = 1;
        for (const Metric& metric : totals_.totals()) {
            if (metric.name != measure)
                continue;
            if (family.series.empty()) {
                auto [unit, factor] = base_unit(metric.unit);
                family.unit = m.unit.empty() ? unit : m.unit;
                multiplier = m.multiplier.value_or(m.unit.empty() ? factor : 1);
                family.help = !m.help.empty() ? m.help : default_help(m, metric);
                family.type = std::holds_alternative<Histogram>(metric.value) ? MetricType::histogram
                                                                             : MetricType::counter;
                family.name = "tpkit_" + m.name;
                if (measures.size() > 1)
                    family.name += "_" + measure;
                if (!family.unit.empty() && !family.name.ends_with("_" + family.unit))
                    family.name += "_" + family.unit;
            }
            Series series;
            for (const Label& label : metric.labels)
                if (keep_event || label.name != "event")
                    series.labels.push_back(label);
            if (const auto* count = std::get_if<std::uint64_t>(&metric.value))
                series.value = static_cast<double>(*count) * multiplier;
            else
                series.value = expose_histogram(std::get<Histogram>(metric.value), multiplier);
            family.series.push_back(std::move(series));
        }
        out.push_back(std::move(family));
    }
}

} // namespace tpkit::exporter
