// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// cpudist against a child that runs a known number of slices: busy for 3 ms, then asleep for
// 1 ms at least (until the test wakes it), `slices` times. Every switch-out of the child after a
// switch-in is one on-CPU time; with -O every switch-in after a switch-out is one off-CPU time.
#include "live.hpp"
#include "sched_child.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using tpkit::live::GatedChild;
using tpkit::live::SchedEvent;

namespace {

constexpr std::uint64_t slices = 20;
constexpr std::int64_t busy_ns = 3'000'000;
constexpr auto asleep = std::chrono::milliseconds(1);

// The lows (us) of the log2 buckets a whole slice (busy_ns) and a whole sleep (asleep) fall in.
constexpr std::uint64_t slice_bucket_low = 2048;
constexpr std::uint64_t sleep_bucket_low = 512;

constexpr int cpudist_rt_priority = 10; // the child's, SCHED_FIFO
constexpr std::size_t cpudist_links = 1; // sched_switch

// The last slice ends as the child sleeps at its second gate.
void run_slices()
{
    for (std::uint64_t i = 0; i < slices; i++) {
        tpkit::live::spin_for(busy_ns);
        if (i + 1 < slices)
            tpkit::live::await_step();
    }
}

// cpudist's rule replayed on the kernel's record: a time begins when the task is switched in
// (off_cpu: out) and ends when it is next switched out (in).
std::uint64_t traced_times(const std::vector<SchedEvent>& events, bool off_cpu)
{
    const auto begins = off_cpu ? SchedEvent::switched_out : SchedEvent::switched_in;
    const auto ends = off_cpu ? SchedEvent::switched_in : SchedEvent::switched_out;
    std::uint64_t times = 0;
    bool started = false;
    for (const auto& e : events) {
        if (e.kind == ends && started) {
            times++;
            started = false;
        } else if (e.kind == begins) {
            started = true;
        }
    }
    return times;
}

} // namespace

// The child is switched in after its first gate and out into its second: between them, as often
// in as out, each switch-out ending one time on the CPU (SCHED_FIFO: rarely preempted, but each
// preemption, which the kernel counts, makes one more): as many as the kernel's record of the
// tracepoints has (sched_child.hpp). A slice not cut by a preemption is on the CPU for its whole
// 3 ms of spinning: in slice_bucket_low or above; one cut k times makes k + 1 times.
TEST(CpudistExact, OneOnCpuTimePerSlice)
{
    TPKIT_REQUIRE_LIVE();
    GatedChild child("tpk-cpudist", tpkit::live::first_allowed_cpu(), cpudist_rt_priority,
                     run_slices);
    auto out = tpkit::live::run_tool_while_acting("cpudist", {"-p", "CHILD"}, cpudist_links, child,
                                                  slices - 1, asleep);
    auto buckets = tpkit::live::histogram_buckets(out.lines);
    const std::uint64_t traced = traced_times(out.events, false);
    EXPECT_EQ(out.switches.voluntary, slices) << "the child did not sleep as planned";
    EXPECT_LE(traced, out.switches.all());
    EXPECT_EQ(tpkit::live::total_count(buckets), traced)
        << out.switches.all() << " switches, " << out.switches.involuntary << " preemptions";
    EXPECT_GE(tpkit::live::count_from(buckets, slice_bucket_low) + 2 * out.switches.involuntary, traced);
}

// Off the CPU from each switch-out to the next switch-in: the switch-in after the first gate
// follows a switch-out that cpudist did not see (the child slept before it started), so one time
// fewer than the switch-ins. Each of the slices - 1 sleeps is 1 ms at least (the test wakes the
// child 1 ms after it is off the CPU): in sleep_bucket_low or above, unless a preemption ended it.
TEST(CpudistExact, OffCpuTimePerSleepPerThread)
{
    TPKIT_REQUIRE_LIVE();
    GatedChild child("tpk-cpudist", tpkit::live::first_allowed_cpu(), cpudist_rt_priority,
                     run_slices);
    auto out = tpkit::live::run_tool_while_acting("cpudist", {"-O", "-L", "0.05"}, cpudist_links,
                                                  child, slices - 1, asleep);
    auto buckets =
        tpkit::live::histogram_buckets(out.lines, std::to_string(child.pid()) + " tpk-cpudist");
    const std::uint64_t traced = traced_times(out.events, true);
    EXPECT_EQ(out.switches.voluntary, slices) << "the child did not sleep as planned";
    EXPECT_LE(traced, out.switches.all() - 1);
    EXPECT_EQ(tpkit::live::total_count(buckets), traced)
        << out.switches.all() << " switches, " << out.switches.involuntary << " preemptions";
    EXPECT_GE(tpkit::live::count_from(buckets, sleep_bucket_low) + out.switches.involuntary, traced);
}
