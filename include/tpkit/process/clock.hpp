// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The clocks of a tool's output: event stamps (CLOCK_MONOTONIC, from bpf_ktime_get_ns()) as
// the time of day, seconds since the start, or "time_ns" in the clock --clock names.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

namespace tpkit {

// The clock of "time_ns" in --json output (docs/json.md). BPF stamps events with
// bpf_ktime_get_ns(), CLOCK_MONOTONIC; the others are that plus their offset to it, measured
// once at the start.
enum class Clock {
    wall, // CLOCK_REALTIME: nanoseconds since the epoch
    mono, // CLOCK_MONOTONIC as the kernel stamped it: ftrace's "mono" trace_clock
    boot, // CLOCK_BOOTTIME: monotonic plus the time suspended
};

std::string_view clock_name(Clock clock);

// Seconds since the epoch as the local time of day, HH:MM:SS.
std::string format_hms(time_t seconds);

// Converts a CLOCK_MONOTONIC nanosecond stamp (bpf_ktime_get_ns) to wall-clock time.
class MonotonicClock {
public:
    MonotonicClock();
    // "HH:MM:SS" local time
    std::string wall_time(std::uint64_t monotonic_ns) const;
    // seconds since this object was made, for -T
    double seconds_since_start(std::uint64_t monotonic_ns) const;
    std::int64_t realtime_ns(std::uint64_t monotonic_ns) const;
    // The stamp in `clock`: JSON's "time_ns".
    std::int64_t time_ns(std::uint64_t monotonic_ns, Clock clock) const;

private:
    std::int64_t offset_ns_;
    std::int64_t boot_offset_ns_;
    std::uint64_t start_ns_;
};

// Now, in `clock`: the "time_ns" of an interval's end.
std::int64_t now_ns(Clock clock);

} // namespace tpkit
