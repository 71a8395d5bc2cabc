// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// runqslower against two busy tasks on one CPU: a SCHED_FIFO hog that spins in bursts of 50 ms
// and a plain busy waiter, which cannot run during a burst. Each burst thus lies inside a wait of
// the waiter, longer than the threshold of 5 ms. The tool must report exactly the waits over
// the threshold that the kernel's own trace of the waiter shows, with their lengths and the task
// switched out for the waiter at their end.
#include "live.hpp"
#include "sched_child.hpp"

#include <signal.h>

#include <fmt/core.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::GatedChild;
using tpkit::live::SchedEvent;
using tpkit::live::ToolRun;

namespace {

constexpr std::uint64_t bursts = 5;
constexpr std::int64_t burst_ns = 50'000'000;
constexpr std::int64_t between_bursts_ns = 50'000'000;
constexpr std::uint64_t threshold_us = 5000;
// The tool's clock reading and ftrace's, at the same tracepoint, differ by a few microseconds on
// a real CPU, by milliseconds in an emulated one; ftrace prints whole microseconds. Bursts are
// longer than the threshold by more than the tolerance.
std::uint64_t tolerance_us()
{
    return std::chrono::microseconds(tpkit::live::patient(2ms)).count();
}

constexpr int hog_rt_priority = 10;         // SCHED_FIFO
constexpr int waiter_rt_priority = 0;       // none: SCHED_OTHER
constexpr std::size_t runqslower_links = 3; // sched_wakeup, sched_wakeup_new, sched_switch

void spin_forever()
{
    for (;;) {
    }
}

// Bursts with sleeps between them long enough that the waiter runs in each gap.
void spin_in_bursts()
{
    for (std::uint64_t i = 0; i < bursts; i++) {
        tpkit::live::spin_for(burst_ns);
        tpkit::live::sleep_for_ns(between_bursts_ns);
    }
}

} // namespace

TEST(RunqslowerExact, WaiterBehindARealtimeHogIsReported)
{
    TPKIT_REQUIRE_LIVE();
    const int cpu = tpkit::live::first_allowed_cpu();
    std::optional<GatedChild> waiter;
    waiter.emplace("tpk-waiter", cpu, waiter_rt_priority, spin_forever);
    GatedChild hog("tpk-hog", cpu, hog_rt_priority, spin_in_bursts);
    const std::string waiter_pid = std::to_string(waiter->pid());
    ToolRun tool({tpkit::live::tool_path("runqslower"), "--json", "-P", "-p", waiter_pid,
                  std::to_string(threshold_us)});
    ASSERT_TRUE(tool.wait_until_attached(runqslower_links, 20s)) << tool.stderr_text();

    std::vector<SchedEvent> events;
    {
        // The tool and the trace both see the waiter from its first wake-up to its end: it is
        // killed (and runs once more to die, ending its last wait) before the trace is read.
        tpkit::live::SchedTrace trace(waiter->pid());
        waiter->start();
        hog.run_act();
        waiter.reset();
        events = trace.events();
    }
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.stderr_text(), "");
    EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");

    std::vector<std::map<std::string, std::string>> reported;
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (!e.count("latency_ns"))
            continue;
        // -p: the waiter's waits only, each over the threshold.
        EXPECT_EQ(e["tid"], waiter_pid) << line;
        EXPECT_EQ(e["pid"], waiter_pid) << line;
        EXPECT_EQ(e["comm"], "tpk-waiter") << line;
        EXPECT_GT(std::stoull(e["latency_ns"]) / 1000, threshold_us) << line;
        reported.push_back(e);
    }

    // The trace's waits, in order, against the tool's. The waiter stays on one CPU: its events
    // arrive in the order they happened. A wait clearly over the threshold must be the next one
    // reported; one within the tolerance of the threshold may be on either side of it for the
    // tool, and is the next one reported if that has its length and its task switched out.
    std::size_t next = 0, burst_waits = 0;
    for (const auto& w : tpkit::live::traced_waits(events)) {
        if (w.us + tolerance_us() <= threshold_us)
            continue;
        burst_waits += w.us >= std::uint64_t(burst_ns / 1000);
        const bool clear = w.us > threshold_us + tolerance_us();
        if (next < reported.size()) {
            auto& r = reported[next];
            const std::uint64_t lat = std::stoull(r["latency_ns"]) / 1000;
            const bool close = lat + tolerance_us() >= w.us && lat <= w.us + tolerance_us();
            if (clear || (close && r["prev_tid"] == std::to_string(w.prev))) {
                EXPECT_TRUE(close) << "the trace's wait of " << w.us << " us reported as " << lat;
                EXPECT_EQ(r["prev_tid"], std::to_string(w.prev));
                if (w.prev == hog.pid()) {
                    EXPECT_EQ(r["prev_comm"], "tpk-hog");
                }
                next++;
                continue;
            }
        }
        EXPECT_FALSE(clear) << "the trace's wait of " << w.us << " us was not reported";
    }
    EXPECT_EQ(next, reported.size()) << "reported waits the trace does not show";
    // Each burst lies inside a wait, which the trace has unless the kernel left its end out (see
    // sched_child.hpp): the bursts made waits, and they were reported.
    EXPECT_GE(burst_waits, 1u);
    if (HasFailure()) {
        // Each event in us: +woken, >in (the task switched out for it), <out (R: runnable).
        std::string trace;
        for (const auto& e : events) {
            const std::uint64_t us = e.ns / 1000;
            if (e.kind == SchedEvent::woken)
                trace += fmt::format(" +{}", us);
            else if (e.kind == SchedEvent::switched_in)
                trace += fmt::format(" >{}({})", us, e.other);
            else
                trace += fmt::format(" <{}{}", us, e.runnable ? "R" : "");
        }
        std::string tool_waits;
        for (auto& e : reported)
            tool_waits += " " + std::to_string(std::stoull(e["latency_ns"]) / 1000) + "(" + e["prev_tid"] + ")";
        ADD_FAILURE() << "the trace in us:" << trace << "\nthe tool's waits:" << tool_waits;
    }
}
