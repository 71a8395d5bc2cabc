// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Which events a command line names: globs over tracefs, per-event filters, and each event's plan.
#include "tpkit/engine/engine.hpp"

#include "engine/decode.hpp"
#include "engine/kernel_text.hpp"
#include "tpkit/kernel/symbols.hpp"
#include "tpkit/kernel/syscalls.hpp"
#include "tpkit/support/error.hpp"
#include "tpkit/support/json.hpp"

#include <bpf/bpf.h>
#include <fmt/core.h>
#include <fnmatch.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <cctype>
#include <optional>

namespace fs = std::filesystem;

namespace tpkit {
namespace {

std::string field_names(const EventFormat& format)
{
    std::string names;
    for (const Field& f : format.fields) {
        if (f.common)
            continue;
        names += names.empty() ? "" : ", ";
        names += f.name;
    }
    return names.empty() ? "none but common_*" : names;
}

bool glob_matches(std::string_view glob, const std::string& text)
{
    return fnmatch(std::string(glob).c_str(), text.c_str(), 0) == 0;
}

} // namespace

fs::path live_events_root() { return tracefs_root() / "events"; }

bool has_wildcard(std::string_view text) { return text.find_first_of("*?[") != std::string_view::npos; }

std::vector<TracepointName> list_events(const fs::path& events_root, std::string_view glob)
{
    std::vector<TracepointName> events;
    std::error_code ec;
    bool full = glob.find(':') != std::string_view::npos;
    for (const auto& sys : fs::directory_iterator(events_root, ec)) {
        if (!sys.is_directory(ec))
            continue;
        std::string system = sys.path().filename().string();
        for (const auto& ev : fs::directory_iterator(sys.path(), ec)) {
            if (!fs::exists(ev.path() / "format", ec))
                continue;
            TracepointName name{system, ev.path().filename().string()};
            bool match = glob.empty() ||
                         (full ? glob_matches(glob, name.str())
                               : glob_matches(glob, name.system) || glob_matches(glob, name.event));
            if (match)
                events.push_back(std::move(name));
        }
    }
    if (ec)
        throw_read_error(events_root.string(), ec);
    std::sort(events.begin(), events.end(),
              [](const auto& a, const auto& b) { return a.str() < b.str(); });
    return events;
}

std::vector<std::string> split_interval_count(const std::vector<std::string>& positionals,
                                              CommonOptions& options)
{
    auto is_number = [](const std::string& s) {
        return !s.empty() && s.find_first_not_of("0123456789.") == std::string::npos;
    };
    std::size_t numbers = 0;
    while (numbers < 2 && numbers < positionals.size() &&
           is_number(positionals[positionals.size() - 1 - numbers]))
        numbers++;
    std::vector<std::string> events(positionals.begin(), positionals.end() - numbers);
    if (events.empty())
        throw Error(Exit::usage, "no tracepoint given (SYSTEM:EVENT)");
    if (numbers >= 1) {
        const std::string& text = positionals[events.size()];
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (*end != '\0' || !(v > 0) || v > 1e9)
            throw Error(Exit::usage, fmt::format("interval '{}' is not a positive number", text));
        options.interval = v;
    }
    if (numbers == 2) {
        const std::string& text = positionals.back();
        bool digits = text.find_first_not_of("0123456789") == std::string::npos && text.size() <= 19;
        if (!digits || std::strtoull(text.c_str(), nullptr, 10) == 0)
            throw Error(Exit::usage, fmt::format("count '{}' is not a positive whole number", text));
        options.count = std::strtoull(text.c_str(), nullptr, 10);
    }
    return events;
}

EventFilters::EventFilters(std::string_view every_event)
{
    if (!every_event.empty())
        filters_.push_back({"", std::string(every_event)});
}

namespace {

// The characters of an event glob in a filter's scope ("sched:sched_*=").
bool glob_character(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_*?[]!-").find(c) != std::string_view::npos;
}

// "sys:event" of "sys:event=EXPR": one ':' between two nonempty runs of glob characters, as no
// expression starts (nor has a quote or space before its first '='). A scan, not a regex: a
// regex's backtracking recursed once per character of the option (a stack overflow at 30,000).
std::optional<std::string_view> filter_scope(std::string_view option)
{
    const std::size_t equals = option.find('=');
    if (equals == std::string_view::npos || (equals + 1 < option.size() && option[equals + 1] == '='))
        return std::nullopt;
    const std::string_view scope = option.substr(0, equals);
    const std::size_t colon = scope.find(':');
    if (colon == 0 || colon == std::string_view::npos || colon + 1 == scope.size() ||
        scope.find(':', colon + 1) != std::string_view::npos)
        return std::nullopt;
    for (std::size_t i = 0; i < scope.size(); i++)
        if (i != colon && !glob_character(scope[i]))
            return std::nullopt;
    return scope;
}

} // namespace

EventFilters::EventFilters(const std::vector<std::string>& options)
{
    for (const std::string& option : options) {
        const auto scope = filter_scope(option);
        if (!scope) {
            if (!option.empty())
                filters_.push_back({"", option});
            continue;
        }
        const std::string expr = option.substr(scope->size() + 1);
        if (expr.empty())
            throw Error(Exit::usage, fmt::format("--filter '{}': no expression after '='", option));
        filters_.push_back({std::string(*scope), expr});
    }
}

EventFilters EventFilters::and_every(std::string_view expr) const
{
    EventFilters more = *this;
    more.filters_.push_back({"", std::string(expr)});
    return more;
}

std::string EventFilters::of(const TracepointName& event) const
{
    std::vector<std::string_view> exprs;
    for (const Scoped& f : filters_)
        if (f.events.empty() || glob_matches(f.events, event.str()))
            exprs.push_back(f.expr);
    if (exprs.size() == 1)
        return std::string(exprs.front());
    std::string all;
    for (std::string_view expr : exprs)
        all += fmt::format("{}({})", all.empty() ? "" : " && ", expr);
    return all;
}

void EventFilters::require_used(const std::vector<TracepointName>& events) const
{
    for (const Scoped& f : filters_) {
        bool used = f.events.empty() || std::any_of(events.begin(), events.end(), [&](const auto& e) {
                        return glob_matches(f.events, e.str());
                    });
        if (!used)
            throw Error(Exit::usage, fmt::format("--filter '{}={}': '{}' is none of the events traced",
                                                 f.events, f.expr, f.events));
    }
}

std::vector<EventPlan> plan_events(const fs::path& events_root,
                                   const std::vector<std::string>& patterns,
                                   const EventFilters& filters, std::size_t max_events)
{
    std::vector<TracepointName> names;
    std::vector<std::string> skipped; // events a glob matched that cannot take BPF programs
    for (const std::string& pattern : patterns) {
        if (has_wildcard(pattern)) {
            if (pattern.find(':') == std::string::npos)
                throw Error(Exit::usage,
                            fmt::format("bad tracepoint glob '{}': expected SYSTEM:EVENT", pattern));
            auto found = list_events(events_root, pattern);
            if (found.empty())
                throw Error(Exit::unknown_target, fmt::format("no tracepoint matches '{}'", pattern));
            // Attaching them would fail only after every other event was attached (and
            // detaching those takes a grace period each): leave them out up front.
            auto unusable = std::stable_partition(found.begin(), found.end(), attaches_bpf);
            if (unusable == found.begin())
                throw Error(Exit::unknown_target,
                            fmt::format("'{}' matches only ftrace:* events: the kernel does not "
                                        "attach BPF programs to them", pattern));
            for (auto it = unusable; it != found.end(); ++it)
                if (std::find(skipped.begin(), skipped.end(), it->str()) == skipped.end())
                    skipped.push_back(it->str());
            names.insert(names.end(), found.begin(), unusable);
            continue;
        }
        TracepointName name = parse_tracepoint_name(pattern);
        std::error_code ec;
        bool exists = fs::exists(events_root / name.system / name.event / "format", ec);
        if (ec && ec != std::errc::filename_too_long) // too long for a file: no such event
            throw_read_error(events_root.string(), ec);
        if (!exists)
            throw unknown_tracepoint(name);
        if (!attaches_bpf(name))
            throw Error(Exit::unknown_target,
                        fmt::format("{}: the kernel does not attach BPF programs to ftrace:* events",
                                    name.str()));
        names.push_back(std::move(name));
    }
    filters.require_used(names);
    std::vector<EventPlan> plans;
    for (auto& name : names) {
        bool seen = std::any_of(plans.begin(), plans.end(),
                                [&](const EventPlan& p) { return p.name.str() == name.str(); });
        if (seen)
            continue;
        if (plans.size() == max_events)
            throw Error(Exit::usage, fmt::format("more than {} events", max_events));
        EventPlan plan;
        plan.format = read_format(events_root / name.system / name.event / "format");
        plan.format.system = name.system;
        plan.name = std::move(name);
        try {
            plan.filter = compile_filter(filters.of(plan.name), plan.format);
        } catch (const Error& e) {
            // Several events: say which one the expression does not fit.
            if (names.size() > 1)
                throw Error(e.code(), fmt::format("{} ({})", e.what(), plan.name.str()));
            throw;
        }
        plan.config.event = static_cast<std::uint32_t>(plans.size());
        plans.push_back(std::move(plan));
    }
    if (!skipped.empty())
        fmt::print(stderr, "{}: skipping {} ftrace:* event{}: the kernel does not attach BPF "
                   "programs to them\n", program_invocation_short_name, skipped.size(),
                   skipped.size() == 1 ? "" : "s");
    return plans;
}

const Field& find_field(const EventFormat& format, std::string_view name)
{
    if (const Field* f = format.field(name))
        return *f;
    throw Error(Exit::unknown_target, fmt::format("{} has no field '{}' (fields: {})",
                                                  event_label(format), name, field_names(format)));
}

bool is_numeric(const Field& f)
{
    return f.kind == FieldKind::scalar &&
           (f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8);
}

tpkit_field_spec field_spec(const Field& f)
{
    tpkit_field_spec spec{};
    spec.offset = f.offset;
    spec.size = static_cast<std::uint16_t>(f.size);
    spec.is_signed = f.is_signed && !f.is_pointer();
    if (is_numeric(f)) {
        bool loadable = f.offset >= TPKIT_FIELD_LOAD_MIN && f.offset + f.size <= TPKIT_FIELD_LOAD_END &&
                        f.offset % f.size == 0;
        spec.access = loadable ? TPKIT_FIELD_LOAD : TPKIT_FIELD_PROBE;
        if (loadable)
            spec.load_slot = static_cast<std::uint16_t>((f.offset - TPKIT_FIELD_LOAD_MIN) / f.size);
    } else if (f.is_string()) {
        spec.access = f.kind == FieldKind::array      ? TPKIT_FIELD_STR_FIXED
                      : f.kind == FieldKind::data_loc ? TPKIT_FIELD_STR_DATA_LOC
                                                      : TPKIT_FIELD_STR_REL_LOC;
        spec.is_signed = 0;
    } else {
        spec.access = TPKIT_FIELD_NONE;
    }
    return spec;
}

} // namespace tpkit
