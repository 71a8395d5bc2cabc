// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// klockstat's collector: its options and how it opens. Its output is libbpf-tools' table of
// lock waits by caller (or thread with -P), or JSON lines.
#pragma once

#include <tpkit/tools/klockstat.h>

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::klockstat {

// Keys (caller stack, lock type, lock, thread) the map holds per interval.
inline constexpr std::uint32_t max_keys = 10240;

enum class Sort { max, total, count };

struct Options {
    std::string caller;         // -c: callers whose name starts with this
    std::string lock;           // -L: a kernel symbol's name or an address
    std::uint32_t entries = 99999999; // -n
    std::uint32_t frames = 1;   // -s: frames printed per caller, from the caller outwards
    Sort sort = Sort::max;      // -S
    bool reset = false;         // -R
    bool per_thread = false;    // -P
    bool by_lock = false;       // --by-lock
    std::uint32_t stack_storage = 16384;
};

void add_options(Cli& cli, Options& options);
// Each print writes the waits counted since the start (since the previous print with -R).
std::unique_ptr<tpkit::Collector> open(const Cli& cli, const Options& options);

// The lock type perf lock contention names contention_begin's flags by ("mutex", "rwsem:W",
// "spinlock"), or the flags as the kernel's trace prints them when it has no name for them.
std::string lock_type(std::uint32_t flags);
// contention_begin's flags as the kernel's trace prints them ("MUTEX|SPIN").
std::string lock_flags(std::uint32_t flags);
// Whether a kernel function is part of taking a lock (mutex_lock, _raw_spin_lock,
// rwsem_down_write_slowpath...): frames skipped before the caller.
bool is_lock_function(std::string_view name);

} // namespace tpkit::klockstat
