// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/engine.hpp"

#include "tpkit/decode.hpp"
#include "tpkit/error.hpp"
#include "tpkit/json.hpp"
#include "tpkit/kernel_text.hpp"
#include "tpkit/symbols.hpp"
#include "tpkit/syscalls.hpp"

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

std::string event_label(const EventFormat& format)
{
    return format.system.empty() ? format.name : format.system + ":" + format.name;
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

bool KeyChoice::has(tpkit_key_source part) const
{
    return std::find(parts.begin(), parts.end(), part) != parts.end();
}

std::uint8_t KeyChoice::bits() const
{
    unsigned bits = 0;
    for (tpkit_key_source part : parts)
        bits |= TPKIT_KEY_BIT(part);
    return static_cast<std::uint8_t>(bits);
}

std::string KeyChoice::name(tpkit_key_source part) const
{
    switch (part) {
    case TPKIT_KEY_COMM:
        return "comm";
    case TPKIT_KEY_PID:
        return "pid";
    case TPKIT_KEY_TID:
        return "tid";
    case TPKIT_KEY_CPU:
        return "cpu";
    case TPKIT_KEY_KSTACK:
        return "kstack";
    case TPKIT_KEY_USTACK:
        return "ustack";
    case TPKIT_KEY_FIELD:
        return field;
    default:
        return "";
    }
}

std::string KeyChoice::name() const
{
    std::string names;
    for (tpkit_key_source part : parts)
        names += (names.empty() ? "" : ",") + name(part);
    return names;
}

const Field* KeyChoice::field_in(const EventFormat& format) const
{
    if (!has(TPKIT_KEY_FIELD))
        return nullptr;
    const Field* f = nullptr;
    for (const Field& candidate : format.fields)
        if ((meaning == Meaning::syscall && is_syscall_number(format, candidate)) ||
            (meaning == Meaning::error && is_syscall_return(format, candidate)))
            f = &candidate;
    return meaning == Meaning::value ? format.field(field) : f;
}

std::vector<EventPlan> plan_keyed_events(const std::filesystem::path& events_root,
                                         const std::vector<std::string>& patterns,
                                         const EventFilters& filters, const KeyChoice& key,
                                         std::size_t max_events)
{
    auto plans = plan_events(events_root, patterns, filters, max_events);
    if (key.meaning != KeyChoice::Meaning::error)
        return plans;
    for (auto& plan : plans)
        configure_key(plan.config, key, plan.format); // says which event has no `ret`
    return plan_events(events_root, patterns, filters.and_every("ret < 0"), max_events);
}

namespace {

// One part of --by into KEY.
void parse_key_part(KeyChoice& key, std::string_view by, std::string_view part,
                    std::initializer_list<tpkit_key_source> allowed)
{
    auto add = [&](tpkit_key_source source) {
        if (key.has(source))
            throw Error(Exit::usage, fmt::format("bad --by '{}': {} named twice", by,
                                                 source == TPKIT_KEY_FIELD ? "a field" : part));
        key.parts.push_back(source);
    };
    const std::pair<std::string_view, tpkit_key_source> generic[] = {
        {"comm", TPKIT_KEY_COMM},     {"pid", TPKIT_KEY_PID},
        {"tid", TPKIT_KEY_TID},       {"cpu", TPKIT_KEY_CPU},
        {"kstack", TPKIT_KEY_KSTACK}, {"ustack", TPKIT_KEY_USTACK}};
    for (const auto& [word, source] : generic) {
        if (part != word)
            continue;
        if (std::find(allowed.begin(), allowed.end(), source) == allowed.end())
            throw Error(Exit::usage, fmt::format("--by {} is not supported here", part));
        add(source);
        return;
    }
    // A syscall's number, a failed syscall's error: by name, whatever the field is called.
    const std::pair<std::string_view, KeyChoice::Meaning> syscall_keys[] = {
        {"syscall", KeyChoice::Meaning::syscall}, {"errno", KeyChoice::Meaning::error}};
    auto meaning = KeyChoice::Meaning::value;
    for (const auto& [word, m] : syscall_keys)
        if (part == word)
            meaning = m;
    bool identifier = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
        return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    });
    if (!identifier)
        throw Error(Exit::usage, fmt::format("bad --by '{}': expected comm, pid, tid, cpu, kstack, "
                                             "ustack or a field name, or several separated by "
                                             "commas", by));
    add(TPKIT_KEY_FIELD);
    key.field = std::string(part);
    key.meaning = meaning;
}

} // namespace

KeyChoice parse_key(std::string_view by, std::initializer_list<tpkit_key_source> allowed)
{
    KeyChoice key;
    if (by.empty())
        return key;
    for (std::size_t at = 0;;) {
        std::size_t comma = by.find(',', at);
        parse_key_part(key, by, by.substr(at, comma == std::string_view::npos ? comma : comma - at),
                       allowed);
        if (comma == std::string_view::npos)
            break;
        at = comma + 1;
    }
    // bcc's folded user stacks begin with the process's name.
    if (key.has(TPKIT_KEY_USTACK) && !key.has(TPKIT_KEY_COMM))
        key.parts.insert(key.parts.begin(), TPKIT_KEY_COMM);
    return key;
}

void configure_key(tpkit_engine_config& config, const KeyChoice& key, const EventFormat& format)
{
    config.key_parts = key.bits();
    if (!key.has(TPKIT_KEY_FIELD))
        return;
    if (key.meaning != KeyChoice::Meaning::value && !key.field_in(format))
        throw Error(Exit::usage,
                    fmt::format("--by {}: {} is no {}", key.field, event_label(format),
                                key.meaning == KeyChoice::Meaning::syscall
                                    ? "syscall event (syscalls:* or raw_syscalls:*)"
                                    : "syscall exit (syscalls:sys_exit_* or raw_syscalls:sys_exit)"));
    const Field& f = key.meaning == KeyChoice::Meaning::value ? find_field(format, key.field)
                                                              : *key.field_in(format);
    switch (header_field(f)) {
    case HeaderField::none:
        break;
    case HeaderField::pid: // what the kernel writes there is the thread's ID
        config.key_parts = static_cast<std::uint8_t>(
            (config.key_parts & ~TPKIT_KEY_BIT(TPKIT_KEY_FIELD)) | TPKIT_KEY_BIT(TPKIT_KEY_TID));
        return;
    case HeaderField::type:
        throw Error(Exit::usage, fmt::format("--by {}: it is the event's ID, the same for every "
                                             "record of the event", f.name));
    case HeaderField::unavailable:
        throw Error(Exit::usage, "--by " + header_field_unavailable(f.name));
    }
    config.key_field = field_spec(f);
    if (is_syscall_user_string(format, f))
        config.key_field.access = TPKIT_FIELD_STR_USER;
    if (config.key_field.access == TPKIT_FIELD_NONE)
        throw Error(Exit::usage, fmt::format("--by {}: field of type '{}' ({} bytes) is neither a "
                                             "number nor a string", f.name, f.type, f.size));
}

std::string key_text(const tpkit_engine_key& key, const KeyChoice& choice, tpkit_key_source part,
                     const EventFormat& format)
{
    auto cut = [&](const char* text, std::size_t size) {
        return std::string(text, strnlen(text, size)) + (key.flags & TPKIT_KEY_CUT ? "…" : "");
    };
    switch (part) {
    case TPKIT_KEY_COMM:
        return std::string(key.comm, strnlen(key.comm, sizeof(key.comm)));
    case TPKIT_KEY_PID:
        return std::to_string(key.pid);
    case TPKIT_KEY_TID:
        return std::to_string(key.tid);
    case TPKIT_KEY_CPU:
        return std::to_string(key.cpu);
    case TPKIT_KEY_FIELD:
        break;
    default:
        return "";
    }
    const Field* f = choice.field_in(format);
    auto value = static_cast<std::int64_t>(key.number);
    if (choice.meaning == KeyChoice::Meaning::syscall)
        return syscall_text(static_cast<std::uint32_t>(key.number));
    if (choice.meaning == KeyChoice::Meaning::error) {
        auto name = value < 0 && value >= -4095 ? errno_name(static_cast<int>(-value)) : std::nullopt;
        return name ? std::string(*name) : std::to_string(-value);
    }
    if (f && header_field(*f) == HeaderField::pid) // common_pid: read as the thread's ID
        return std::to_string(key.tid);
    if (f && is_syscall_return(format, *f))
        if (auto error = syscall_error_text(value))
            return *error;
    if (f && (f->is_string() || is_syscall_user_string(format, *f)))
        return cut(key.str, sizeof(key.str));
    if (f && f->is_pointer())
        return fmt::format("0x{:x}", key.number);
    if (f && f->is_signed)
        return std::to_string(static_cast<std::int64_t>(key.number));
    return std::to_string(key.number);
}

void note_cut_key(std::string_view tool, const tpkit_engine_key& key, const KeyChoice& choice)
{
    static bool noted = false;
    if (noted || !(key.flags & TPKIT_KEY_CUT))
        return;
    noted = true;
    fmt::print(stderr, "{}: values of {} longer than {} characters are cut there (keys ending in …): "
               "values that differ only after that are counted together\n",
               tool, choice.field, TPKIT_KEY_STR_MAX - 1);
}

bool key_is_number(const KeyChoice& choice, tpkit_key_source part, const EventFormat& format)
{
    if (part == TPKIT_KEY_PID || part == TPKIT_KEY_TID || part == TPKIT_KEY_CPU)
        return true;
    if (part != TPKIT_KEY_FIELD)
        return false;
    const Field* f = choice.field_in(format);
    if (choice.meaning != KeyChoice::Meaning::value || (f && is_syscall_return(format, *f)))
        return false; // names ("read", "ENOENT", "-ENOENT")
    return !f || (!f->is_string() && !f->is_pointer());
}

void configure_value(tpkit_engine_config& config, const EventFormat& format, std::string_view name)
{
    const Field& f = find_field(format, name);
    if (header_field(f) == HeaderField::unavailable)
        throw Error(Exit::usage, header_field_unavailable(f.name));
    if (header_field(f) != HeaderField::none)
        throw Error(Exit::usage, fmt::format("field '{}' of {} is an identifier, not a measure: "
                                             "count it with tpcount --by", f.name,
                                             event_label(format)));
    if (!is_numeric(f))
        throw Error(Exit::usage,
                    fmt::format("field '{}' of {} is '{}' ({} bytes), not a number: a histogram "
                                "needs a 1, 2, 4 or 8-byte integer field",
                                f.name, event_label(format), f.type, f.size));
    config.value = field_spec(f);
}

void prepare_snoop(std::vector<EventPlan>& plans, const std::vector<std::string>& fields)
{
    for (const std::string& name : fields) {
        const Field* found = nullptr;
        for (const EventPlan& plan : plans)
            if ((found = plan.format.field(name)))
                break;
        if (!found)
            find_field(plans.front().format, name); // throws, listing the fields
        else if (header_field(*found) == HeaderField::unavailable)
            throw Error(Exit::usage, "-f " + header_field_unavailable(name));
    }
    std::optional<std::uint64_t> jiffies; // read once, for the first event that needs it
    for (EventPlan& plan : plans) {
        configure_record(plan.config, plan.format);
        for (const Field* f : fields_to_print(plan.format, fields))
            if (is_syscall_user_string(plan.format, *f))
                plan.config.user_strings |= static_cast<std::uint8_t>(1u << syscall_argument_index(*f));
        plan.config.kernel_strings = kernel_string_offsets(plan.format, plan.config.kernel_string_offsets);
        if (reads_jiffies(plan.format)) {
            if (!jiffies)
                jiffies = kernel_symbol_address("jiffies_64").value_or(0);
            plan.config.jiffies_address = *jiffies; // 0 (unknown): the kernel's text has age 0
        }
    }
}

void configure_record(tpkit_engine_config& config, const EventFormat& format)
{
    config.event_id = format.id;
    config.fixed_size = std::min<std::uint32_t>(format.fixed_size(), TPKIT_SNOOP_RECORD_MAX);
    config.dynamic_count = 0;
    for (const Field& f : format.fields) {
        if (!f.is_dynamic())
            continue;
        if (config.dynamic_count == TPKIT_SNOOP_MAX_DYNAMIC)
            throw Error(Exit::usage, fmt::format("{} has more than {} dynamic fields",
                                                 event_label(format), TPKIT_SNOOP_MAX_DYNAMIC));
        config.dynamic_offsets[config.dynamic_count++] =
            f.offset | (f.kind == FieldKind::rel_loc ? TPKIT_SNOOP_REL_LOC : 0u);
    }
}

Histogram histogram_from_slots(const tpkit_engine_config& config,
                               std::span<const std::uint64_t> slots)
{
    switch (config.hist_layout) {
    case TPKIT_HIST_LOGLINEAR:
        return Histogram::from_loglinear(slots, config.sub_bits);
    case TPKIT_HIST_LINEAR:
        return Histogram::from_linear(slots, linear_range(config.linear_min, config.linear_max,
                                                          config.linear_step));
    default:
        return Histogram::from_log2(slots);
    }
}

std::string describe_event(const EventFormat& format, bool with_fields)
{
    std::string text = event_label(format) + "\n";
    if (!with_fields)
        return text;
    for (const Field& f : format.fields) {
        std::string decl = f.kind == FieldKind::array
                               ? fmt::format("{} {}[{}]", f.elem_type, f.name, f.array_len)
                               : fmt::format("{} {}", f.type, f.name);
        text += fmt::format("    {:<40} offset:{:<4} size:{:<4} {}\n", decl + ";", f.offset, f.size,
                            f.is_signed ? "signed" : "unsigned");
    }
    return text;
}

std::string describe_event_json(const EventFormat& format, bool with_fields)
{
    JsonObject obj;
    obj.add("type", "tracepoint").add("event", event_label(format)).add("id", format.id);
    if (!with_fields)
        return obj.str();
    std::string fields = "[";
    for (const Field& f : format.fields) {
        if (fields.size() > 1)
            fields += ',';
        fields += JsonObject()
                      .add("name", f.name)
                      .add("type", f.type)
                      .add("offset", f.offset)
                      .add("size", f.size)
                      .add("signed", f.is_signed)
                      .add("common", f.common)
                      .str();
    }
    // "format", not "fields": tpsnoop's "fields" are an event's values, an object.
    return obj.add_raw("format", fields + "]").str();
}

namespace {

// What bpf/include/tpkit/syscall.bpf.h needs: x86-64's registers and thread_info (5.11 put
// syscall_work before status), bpf_task_pt_regs (5.15) and the kernel's BTF, which its loads
// are checked against.
bool raw_syscalls_usable()
{
#if defined(__x86_64__)
    utsname u{};
    unsigned major = 0, minor = 0;
    if (uname(&u) != 0 || std::sscanf(u.release, "%u.%u", &major, &minor) != 2)
        return false;
    std::error_code ec;
    return (major > 5 || (major == 5 && minor >= 15)) && fs::exists("/sys/kernel/btf/vmlinux", ec);
#else
    return false;
#endif
}

tpkit_syscall_tracepoint syscall_side(const TracepointName& name)
{
    if (name.system != "syscalls" || !syscall_event_number(name.event))
        return TPKIT_SYSCALL_NONE;
    if (name.event.starts_with("sys_enter_"))
        return TPKIT_SYSCALL_ENTER;
    return name.event.starts_with("sys_exit_") ? TPKIT_SYSCALL_EXIT : TPKIT_SYSCALL_NONE;
}

bool filter_reads(const FilterProgram& filter, tpkit_filter_source source)
{
    return std::any_of(filter.insns, filter.insns + filter.len,
                       [&](const tpkit_filter_insn& i) { return i.source == source; });
}

// The arguments of a syscall event that the engine reads (bit i: args[i] of
// tpkit_syscall_record): those the filter, the key and the value name; all for a copy.
std::uint8_t arguments_read(const EventPlan& plan)
{
    constexpr std::uint8_t all = 0x3f;
    if (plan.config.event_id != 0) // tpsnoop copies the record
        return all;
    auto bit = [](std::uint32_t offset) -> std::uint8_t {
        constexpr std::uint32_t first = offsetof(tpkit_syscall_record, args);
        return offset < first ? 0 : static_cast<std::uint8_t>(1u << ((offset - first) / 8)) & all;
    };
    std::uint8_t mask = 0;
    for (std::uint32_t i = 0; i < plan.filter.len; i++) {
        const auto& insn = plan.filter.insns[i];
        if (insn.source == TPKIT_FILTER_SRC_UNSIGNED || insn.source == TPKIT_FILTER_SRC_SIGNED ||
            insn.source == TPKIT_FILTER_SRC_STR_USER)
            mask |= bit(insn.offset);
        else if (insn.source == TPKIT_FILTER_SRC_STR_FIXED ||
                 insn.source == TPKIT_FILTER_SRC_STR_DATA_LOC ||
                 insn.source == TPKIT_FILTER_SRC_STR_REL_LOC)
            mask = all; // no syscall event has strings; read everything rather than guess
    }
    if (plan.config.key_parts & TPKIT_KEY_BIT(TPKIT_KEY_FIELD))
        mask |= bit(plan.config.key_field.offset);
    if (plan.config.value.access != TPKIT_FIELD_NONE)
        mask |= bit(plan.config.value.offset);
    return mask;
}

// The rodata of a raw instance serving PLAN: what tells events apart (index, ID, record size)
// moves to the syscall map, so that events differing in nothing else compare equal.
InstancePlan raw_instance(const EventPlan& plan, tpkit_syscall_tracepoint side)
{
    InstancePlan instance;
    instance.config = plan.config;
    instance.config.event = 0;
    instance.config.event_id = 0;
    instance.config.fixed_size = 0;
    instance.config.user_strings = 0;
    instance.config.syscall_tracepoint = static_cast<std::uint8_t>(side);
    instance.filter = plan.filter;
    if (!filter_reads(plan.filter, TPKIT_FILTER_SRC_EVENT_ID))
        instance.filter.event_id = 0;
    instance.config.syscall_args = arguments_read(plan);
    return instance;
}

bool same_rodata(const InstancePlan& a, const InstancePlan& b)
{
    return std::memcmp(&a.config, &b.config, sizeof(a.config)) == 0 &&
           std::memcmp(&a.filter, &b.filter, sizeof(a.filter)) == 0;
}

void fill_syscall_events(bpf_map* map, const InstancePlan& instance,
                         const std::vector<EventPlan>& plans)
{
    for (std::uint32_t index : instance.events) {
        const EventPlan& plan = plans[index];
        std::uint32_t nr = *syscall_event_number(plan.name.event);
        tpkit_syscall_event value{1, index, plan.format.id, plan.config.fixed_size,
                                  plan.config.user_strings};
        check_libbpf(bpf_map__update_elem(map, &nr, sizeof(nr), &value, sizeof(value), BPF_ANY),
                     ("cannot fill the syscall map of " + plan.name.str()).c_str());
    }
}

} // namespace

std::vector<InstancePlan> plan_instances(const std::vector<EventPlan>& plans, bool classic)
{
    return plan_instances(plans, classic, raw_syscalls_usable());
}

std::vector<InstancePlan> plan_instances(const std::vector<EventPlan>& plans, bool classic,
                                         bool raw_syscalls_usable)
{
    std::vector<InstancePlan> instances;
    std::vector<std::size_t> raw; // instances on raw_syscalls, to group into
    for (std::uint32_t i = 0; i < plans.size(); i++) {
        auto side = classic || !raw_syscalls_usable ? TPKIT_SYSCALL_NONE : syscall_side(plans[i].name);
        if (side == TPKIT_SYSCALL_NONE) {
            instances.push_back({{i}, plans[i].config, plans[i].filter});
            continue;
        }
        InstancePlan instance = raw_instance(plans[i], side);
        auto same = std::find_if(raw.begin(), raw.end(), [&](std::size_t r) {
            return same_rodata(instances[r], instance);
        });
        if (same != raw.end()) {
            instances[*same].events.push_back(i);
            continue;
        }
        instance.events.push_back(i);
        raw.push_back(instances.size());
        instances.push_back(std::move(instance));
    }
    return instances;
}

void prepare_instance(const EnginePrograms& programs, const InstancePlan& instance)
{
    bool raw = instance.raw_syscalls();
    check_libbpf(bpf_program__set_autoload(programs.tracepoint, !raw),
                 "cannot choose the engine's program");
    check_libbpf(bpf_program__set_autoload(programs.syscall, raw),
                 "cannot choose the engine's program");
    if (raw)
        check_libbpf(bpf_map__set_max_entries(programs.syscall_events, TPKIT_SYSCALL_NR_MAX),
                     "cannot size the engine's syscall map");
    // A map less per instance: hundreds of classic events hold hundreds fewer descriptors.
    check_libbpf(bpf_map__set_autocreate(programs.filter_user_str,
                                         filter_reads(instance.filter, TPKIT_FILTER_SRC_STR_USER)),
                 "cannot leave out the filter's string buffer");
    if (programs.user_strings)
        check_libbpf(bpf_map__set_autocreate(programs.user_strings,
                                             raw || instance.config.user_strings),
                     "cannot leave out the syscall strings' buffer");
}

Link attach_instance(const EnginePrograms& programs, const InstancePlan& instance,
                     const std::vector<EventPlan>& plans)
{
    if (!instance.raw_syscalls()) {
        const TracepointName& name = plans[instance.events.front()].name;
        return attach_tracepoint(programs.tracepoint, name.system, name.event);
    }
    fill_syscall_events(programs.syscall_events, instance, plans);
    const char* tracepoint =
        instance.config.syscall_tracepoint == TPKIT_SYSCALL_ENTER ? "sys_enter" : "sys_exit";
    bpf_link* link = bpf_program__attach_raw_tracepoint(programs.syscall, tracepoint);
    if (!link)
        throw_libbpf_error(Exit::kernel_refused,
                           fmt::format("cannot attach to raw tracepoint {}", tracepoint), errno);
    for (std::uint32_t index : instance.events)
        note_traced(plans[index].name.str()); // what was asked for, through raw_syscalls
    return Link(link, &bpf_link__destroy);
}

void say_attached_before_stop(std::string_view tool, std::size_t attached, std::size_t planned)
{
    if (attached < planned)
        fmt::print(stderr, "{}: stopped while attaching: {} of {} tracepoints attached\n", tool,
                   attached, planned);
}

void add_classic_option(Cli& cli, bool& classic)
{
    cli.flag("--classic", classic,
             "attach syscalls:* events to their own tracepoints, not through raw_syscalls");
}

void add_stack_storage_option(Cli& cli, std::uint32_t& stacks)
{
    cli.option("--stack-storage-size", stacks,
               fmt::format("distinct stacks kept for the whole run (default {})", stacks))
        .range(1u, 1u << 24);
}

void share_map(bpf_map* from, bpf_map* into)
{
    if (int err = bpf_map__reuse_fd(into, bpf_map__fd(from)))
        throw_libbpf_error(Exit::kernel_refused,
                           fmt::format("cannot share map {}", bpf_map__name(from)), err);
}

namespace {
bool fd_limit_counted = false; // raise_fd_limit_for() ran: the tool counted for all it loads

// Raises the soft limit to NEEDED; a hard limit below it: Error(failure) saying WHO needs it.
void raise_fd_limit_to(std::size_t needed, const std::string& who)
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
        throw Error(Exit::failure,
                    fmt::format("{} about {} open files; the hard limit is {} (ulimit -Hn)", who,
                                needed, static_cast<unsigned long long>(limit.rlim_max)));
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed)
        return;
    limit.rlim_cur = needed;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
        throw Error(Exit::failure, fmt::format("cannot raise the open files limit to {}: {}",
                                               needed, std::strerror(errno)));
}

std::size_t fds_needed(std::size_t events, const bpf_object* obj)
{
    // One loaded and attached instance holds a descriptor per map it creates and per program it
    // loads, one for its BTF, and per program a perf event and a link.
    std::size_t maps = 0, programs = 0;
    bool ringbuf = false, perfbuf = false;
    bpf_map* map;
    bpf_object__for_each_map(map, obj) {
        if (!bpf_map__autocreate(map))
            continue;
        maps++;
        ringbuf |= bpf_map__type(map) == BPF_MAP_TYPE_RINGBUF;
        perfbuf |= bpf_map__type(map) == BPF_MAP_TYPE_PERF_EVENT_ARRAY;
    }
    bpf_program* prog;
    bpf_object__for_each_program(prog, obj)
        programs += bpf_program__autoload(prog) ? 1 : 0;
    std::size_t per_instance = maps + 1 + 3 * programs;
    // Once per tool: what is open already (stdio, inherited), a perf event per CPU when events
    // are read from a perf buffer, and room for the epoll and signal descriptors and for those
    // libbpf opens for a moment while loading.
    std::size_t open_now = 0;
    std::error_code ec;
    for (fs::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec))
        open_now++;
    int cpus = perfbuf && !ringbuf ? libbpf_num_possible_cpus() : 0;
    return std::max<std::size_t>(open_now, 3) + 16 + std::max(cpus, 0) + events * per_instance;
}

} // namespace

void raise_fd_limit_for(std::size_t events, const bpf_object* obj)
{
    fd_limit_counted = true;
    raise_fd_limit_to(fds_needed(events, obj),
                      fmt::format("{} event{}", events, events == 1 ? " needs" : "s need"));
}

void raise_fd_limit_once(const bpf_object* obj, const std::string& what)
{
    if (!fd_limit_counted)
        raise_fd_limit_to(fds_needed(1, obj), "the BPF programs of " + what + " need");
    fd_limit_counted = true;
}

} // namespace tpkit
