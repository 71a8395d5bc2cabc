// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Errors and exit codes shared by every tpkit tool and by the library.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace tpkit {

// Exit codes, the same in every tool (documented in README.md).
enum class Exit : int {
    ok = 0,
    failure = 1,        // runtime failure not covered below
    usage = 2,          // bad flag, value or expression
    no_privileges = 3,  // not root / lacking CAP_BPF+CAP_PERFMON, tracefs not accessible
    unknown_target = 4, // unknown event, field or device
    kernel_refused = 5, // the kernel refused to load or attach a BPF program
};

// An error that knows which exit code it maps to; its message is one line without the
// program name.
class Error : public std::runtime_error {
public:
    Error(Exit code, const std::string& message) : std::runtime_error(message), code_(code) {}
    Exit code() const noexcept { return code_; }

private:
    Exit code_;
};

// MESSAGE as one line of stderr: control bytes escaped (\n, \xNN) and, past max_message_bytes,
// cut with the count of bytes left out. A message may echo any input: a 100 KB value, an event
// name that holds a newline.
inline constexpr std::size_t max_message_bytes = 512;
std::string one_line(std::string_view message);

// Of `candidates`, the one nearest to `word` when it is near enough to be a slip of the keyboard
// (one edit for every four characters, three at most), for "did you mean …?"; empty when none is.
std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

// The error for a failed libbpf call: EPERM/EACCES map to no_privileges, the rest to code.
[[noreturn]] void throw_libbpf_error(Exit code, const std::string& what, int err);

// The error for a file or directory that could not be read ("cannot read PATH: reason"):
// EPERM/EACCES map to no_privileges, the rest (a limit such as EMFILE) to failure.
[[noreturn]] void throw_read_error(const std::string& path, std::error_code ec);

// A libbpf setter's result (0, or a negative errno): Error(failure) naming `what` when it failed.
inline void check_libbpf(int err, const char* what)
{
    if (err)
        throw_libbpf_error(Exit::failure, what, err);
}

} // namespace tpkit
