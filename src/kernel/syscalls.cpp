// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The syscall table itself is generated at build time (syscall_table.cpp in the build tree).
#include "tpkit/kernel/syscalls.hpp"

#include "tpkit/engine.h"
#include "tpkit/support/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <charconv>
#include <cstring>
#include <utility>

namespace tpkit {
namespace {

// Syscall numbers and error numbers alike stay below 4096: the kernel returns -1..-4095 as errors.
constexpr std::uint32_t max_errno = 4095;

std::optional<std::uint32_t> whole_number(std::string_view text)
{
    std::uint32_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

} // namespace

std::optional<std::string_view> syscall_name(std::uint32_t number)
{
    auto all = syscalls();
    auto it = std::lower_bound(all.begin(), all.end(), number,
                               [](const Syscall& s, std::uint32_t n) { return s.number < n; });
    if (it == all.end() || it->number != number)
        return std::nullopt;
    return it->name;
}

std::string syscall_text(std::uint32_t number)
{
    if (auto name = syscall_name(number))
        return std::string(*name);
    return fmt::format("[unknown: {}]", number);
}

std::optional<std::uint32_t> syscall_number(std::string_view name)
{
    for (const Syscall& s : syscalls())
        if (s.name == name)
            return s.number;
    return std::nullopt;
}

std::optional<std::uint32_t> syscall_event_number(std::string_view event)
{
    // arch/x86/entry/syscalls/syscall_64.tbl: the entry points named apart from their syscall.
    static constexpr std::pair<std::string_view, std::string_view> defined_as[] = {
        {"newstat", "stat"},          {"newfstat", "fstat"},   {"newlstat", "lstat"},
        {"newuname", "uname"},        {"sendfile64", "sendfile"}, {"umount", "umount2"},
    };
    std::string_view name = event;
    for (std::string_view prefix : {"sys_enter_", "sys_exit_"})
        if (name.starts_with(prefix)) {
            name.remove_prefix(prefix.size());
            break;
        }
    if (name.size() == event.size())
        return std::nullopt;
    for (const auto& [defined, table] : defined_as)
        if (name == defined)
            name = table;
    return syscall_number(name);
}

std::uint32_t parse_syscall(std::string_view text)
{
    if (auto number = whole_number(text)) {
        // The BPF programs count syscalls by number in tables of TPKIT_SYSCALL_NR_MAX.
        if (*number >= TPKIT_SYSCALL_NR_MAX)
            throw Error(Exit::usage, fmt::format("syscall number {} is out of range 0..{}", text,
                                                 TPKIT_SYSCALL_NR_MAX - 1));
        return *number;
    }
    if (auto number = syscall_number(text))
        return *number;
    throw Error(Exit::usage, fmt::format("unknown syscall '{}'", text));
}

std::optional<std::string_view> errno_name(int number)
{
    if (const char* name = strerrorname_np(number))
        return name;
    return std::nullopt;
}

std::optional<int> errno_number(std::string_view name)
{
    // Second names of one number: strerrorname_np gives only the first.
    static constexpr std::pair<std::string_view, int> aliases[] = {
        {"EWOULDBLOCK", EWOULDBLOCK}, {"EDEADLOCK", EDEADLOCK}, {"ENOTSUP", ENOTSUP}};
    for (const auto& [alias, number] : aliases)
        if (alias == name)
            return number;
    for (int number = 1; number <= static_cast<int>(max_errno); number++)
        if (errno_name(number) == name)
            return number;
    return std::nullopt;
}

int parse_errno(std::string_view text)
{
    if (auto number = whole_number(text)) {
        if (*number == 0 || *number > max_errno)
            throw Error(Exit::usage,
                        fmt::format("errno {} is out of range 1..{}", text, max_errno));
        return static_cast<int>(*number);
    }
    if (auto number = errno_number(text))
        return *number;
    throw Error(Exit::usage, fmt::format("unknown errno '{}': a name such as ENOENT, or a number",
                                         text));
}

std::optional<std::string> syscall_error_text(std::int64_t ret)
{
    if (ret >= 0 || ret < -4095)
        return std::nullopt;
    if (auto name = errno_name(static_cast<int>(-ret)))
        return "-" + std::string(*name);
    return std::to_string(ret);
}

bool is_syscall_return(const EventFormat& format, const Field& f)
{
    if (f.name != "ret")
        return false;
    return (format.system == "syscalls" && format.name.starts_with("sys_exit_")) ||
           (format.system == "raw_syscalls" && format.name == "sys_exit");
}

bool is_syscall_number(const EventFormat& format, const Field& f)
{
    return (format.system == "syscalls" && f.name == "__syscall_nr") ||
           (format.system == "raw_syscalls" && f.name == "id");
}

bool is_syscall_user_string(const EventFormat& format, const Field& f)
{
    if (format.system != "syscalls" || !format.name.starts_with("sys_enter_") || f.common ||
        f.kind != FieldKind::scalar || f.size != 8)
        return false;
    if (f.type == "const char *")
        return f.name != "buf";
    if (f.type == "char *")
        return (f.name == "filename" || f.name == "pathname" || f.name == "name") &&
               !format.field("len");
    return false;
}

std::uint32_t syscall_argument_index(const Field& f)
{
    constexpr std::uint32_t first = offsetof(tpkit_syscall_record, args);
    return f.offset < first ? 0 : (f.offset - first) / 8;
}

} // namespace tpkit
