// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The kernel's system calls by number and name, and error numbers by name: what tools print for
// a syscall ID or take as an option. Syscall names come from the build's <asm/unistd_64.h>,
// turned into a table at build time (cmake/gen-syscall-table.cmake); errno names from glibc.
#pragma once

#include "tpkit/kernel/format.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tpkit {

struct Syscall {
    std::uint32_t number;
    std::string_view name;
};

// Every syscall the build's headers name, by number.
std::span<const Syscall> syscalls();

// "read" for 0; nullopt for a number the headers do not name (a newer kernel's syscall).
std::optional<std::string_view> syscall_name(std::uint32_t number);
// The name, or "[unknown: N]" as bcc's tools print it.
std::string syscall_text(std::uint32_t number);
// 0 for "read"; nullopt for an unknown name.
std::optional<std::uint32_t> syscall_number(std::string_view name);
// The syscall whose classic events are syscalls:sys_enter_NAME and sys_exit_NAME (EVENT is the
// event's name, "sys_enter_newstat"). NAME is the kernel's SYSCALL_DEFINE name, which for a few
// x86-64 syscalls is not the table's (newstat is stat). nullopt for a name the table lacks.
std::optional<std::uint32_t> syscall_event_number(std::string_view event);
// A syscall given on the command line, by name or number; Error(usage) for a name the headers
// do not know or a number past the BPF tables' TPKIT_SYSCALL_NR_MAX (0..1023).
std::uint32_t parse_syscall(std::string_view text);

// "ENOENT" for 2 (glibc's strerrorname_np); nullopt when glibc has no name for it.
std::optional<std::string_view> errno_name(int number);
// 2 for "ENOENT"; glibc's aliases (EWOULDBLOCK, EDEADLOCK, ENOTSUP) too; nullopt when unknown.
std::optional<int> errno_number(std::string_view name);
// An error number given on the command line, by name ("ENOENT") or number (1..4095, the range
// syscalls return); Error(usage) otherwise.
int parse_errno(std::string_view text);

// A syscall's return as strace shows an error: "-ENOENT" for -2 ("-4094" for an error glibc has
// no name for); nullopt when it is no error (0 and up, or below -4095: an address).
std::optional<std::string> syscall_error_text(std::int64_t ret);

// Whether field F of FORMAT is a syscall's return value (`ret` of sys_exit_* and
// raw_syscalls:sys_exit), a syscall's number (`__syscall_nr` of syscalls:*, `id` of
// raw_syscalls:*).
bool is_syscall_return(const EventFormat& format, const Field& f);
bool is_syscall_number(const EventFormat& format, const Field& f);

// Whether field F of FORMAT is a string a syscall reads from the caller's memory, which tpkit
// reads too (src/engine/engine.cpp, tpsnoop): an argument of syscalls:sys_enter_* of type
// `const char *` (a path, a name), but not write's and pwrite64's `buf` (bytes with a count);
// of type `char *` only `filename`, `pathname` and `name` of a call without a `len` (utime's,
// umount's). Other `char *` are buffers the call fills (read, readlink, getcwd) or bytes with a
// length; `const char *const *` (argv) is no string.
bool is_syscall_user_string(const EventFormat& format, const Field& f);
// The index of a syscalls:sys_* event's argument in its record (tpkit_syscall_record.args).
std::uint32_t syscall_argument_index(const Field& f);

} // namespace tpkit
