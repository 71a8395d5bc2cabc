// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Signal names both ways, for tools' columns ("SIGKILL") and options (-s KILL, -s 9), and the
// wait status of an ended process as bcc's exitsnoop words it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tpkit {

// Linux's signals are 1 to 64 (_NSIG on every architecture tpkit builds for).
inline constexpr int max_signal = 64;

// "SIGKILL" for 9. Real-time signals are named as the C library numbers them, like `kill -l`:
// SIGRTMIN, SIGRTMIN+1 … SIGRTMAX-1, SIGRTMAX; the ones below the C library's SIGRTMIN (glibc
// keeps 32 and 33 for its threads) as SIG32, SIG33. Empty for a number that is no signal (0,
// negative, above 64). The text lives as long as the program.
std::string_view signal_name(int sig);

// A signal by name (any case, with or without SIG: KILL, SIGKILL, sigkill, RTMIN+2, SIGRTMAX-1,
// SIG32) or by number (1 to 64). Anything else: Error(usage) naming it.
int parse_signal(std::string_view text);

// A comma-separated list of signals (parse_signal each, at least one) as a set: bit sig-1.
std::uint64_t parse_signal_set(std::string_view list);

// A wait(2) status as text: "0", "code 7", "signal 9 (SIGKILL)", "signal 6 (SIGABRT), core dumped".
std::string exit_status_text(std::uint32_t status);

} // namespace tpkit
