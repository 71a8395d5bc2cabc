// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/process/clock.hpp"

#include <time.h>

namespace tpkit {
namespace {

std::int64_t clock_ns(clockid_t clock)
{
    timespec ts{};
    clock_gettime(clock, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

} // namespace

std::string format_hms(time_t seconds)
{
    tm local{};
    localtime_r(&seconds, &local);
    char text[16];
    std::strftime(text, sizeof(text), "%H:%M:%S", &local);
    return text;
}

std::string_view clock_name(Clock clock)
{
    switch (clock) {
    case Clock::mono:
        return "mono";
    case Clock::boot:
        return "boot";
    case Clock::wall:
        break;
    }
    return "wall";
}

MonotonicClock::MonotonicClock()
    : offset_ns_(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC)),
      boot_offset_ns_(clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC)),
      start_ns_(static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC)))
{
}

std::int64_t MonotonicClock::time_ns(std::uint64_t monotonic_ns, Clock clock) const
{
    switch (clock) {
    case Clock::mono:
        return static_cast<std::int64_t>(monotonic_ns);
    case Clock::boot:
        return static_cast<std::int64_t>(monotonic_ns) + boot_offset_ns_;
    case Clock::wall:
        break;
    }
    return realtime_ns(monotonic_ns);
}

std::int64_t now_ns(Clock clock)
{
    switch (clock) {
    case Clock::mono:
        return clock_ns(CLOCK_MONOTONIC);
    case Clock::boot:
        return clock_ns(CLOCK_BOOTTIME);
    case Clock::wall:
        break;
    }
    return clock_ns(CLOCK_REALTIME);
}

std::int64_t MonotonicClock::realtime_ns(std::uint64_t monotonic_ns) const
{
    return static_cast<std::int64_t>(monotonic_ns) + offset_ns_;
}

std::string MonotonicClock::wall_time(std::uint64_t monotonic_ns) const
{
    return format_hms(static_cast<time_t>(realtime_ns(monotonic_ns) / 1'000'000'000));
}

double MonotonicClock::seconds_since_start(std::uint64_t monotonic_ns) const
{
    return (static_cast<double>(monotonic_ns) - static_cast<double>(start_ns_)) / 1e9;
}


} // namespace tpkit
