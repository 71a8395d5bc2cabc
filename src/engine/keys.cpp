// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// --by: the key an engine counts by, configured in its rodata and printed back.
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

namespace tpkit {

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

} // namespace tpkit
