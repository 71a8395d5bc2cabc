// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// runqlat against a child that is woken a known number of times: every switch-in of the child
// ends one run-queue wait (after a wake-up or a preemption), one count in its histogram, no more,
// no fewer.
#include "live.hpp"
#include "sched_child.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using tpkit::live::GatedChild;

namespace {

// Wake-ups of the child: one from its first gate, then one per step.
constexpr int steps = 19;
constexpr std::uint64_t wakeups = steps + 1;

constexpr int runqlat_rt_priority = 10;  // the child's, SCHED_FIFO
constexpr std::size_t runqlat_links = 3; // sched_wakeup, sched_wakeup_new, sched_switch

void sleep_between_gates()
{
    for (int i = 0; i < steps; i++)
        tpkit::live::await_step();
}

// runqlat with `args` ("CHILD" stands for the child's PID) while the child is woken `wakeups`
// times; the child's histogram is keyed by its PID and `comm` (the only one without). The child
// is SCHED_FIFO, so preemptions are rare, but they are counted, not assumed away: each switch-in
// ends one wait, as many as the kernel's record of the tracepoints has (sched_child.hpp), which
// on a kernel that traces every switch is as often as it was switched out (it ends switched out).
void expect_one_count_per_switch_in(const std::vector<std::string>& args,
                                    const std::optional<std::string>& comm)
{
    TPKIT_REQUIRE_LIVE();
    GatedChild child("tpk-runqlat", tpkit::live::first_allowed_cpu(), runqlat_rt_priority,
                     sleep_between_gates);
    auto out = tpkit::live::run_tool_while_acting("runqlat", args, runqlat_links, child, steps);
    std::optional<std::string> child_key;
    if (comm)
        child_key = std::to_string(child.pid()) + " " + *comm;
    const std::uint64_t traced = tpkit::live::traced_waits(out.events).size();
    EXPECT_EQ(out.switches.voluntary, wakeups) << "the child did not sleep as planned";
    EXPECT_LE(traced, out.switches.all());
    const auto buckets = tpkit::live::histogram_buckets(out.lines, child_key);
    EXPECT_EQ(tpkit::live::total_count(buckets), traced)
        << out.switches.all() << " switches, " << out.switches.involuntary << " preemptions";
}

} // namespace

TEST(RunqlatExact, OneLatencyPerWakeupOfTheSelectedProcess)
{
    expect_one_count_per_switch_in({"-p", "CHILD"}, std::nullopt);
}

TEST(RunqlatExact, PerThreadHistogramsDrainedEveryIntervalLoseNothing)
{
    // Printed every 50 ms while the child sleeps: the drains must not lose a count.
    expect_one_count_per_switch_in({"-L", "0.05"}, "tpk-runqlat");
}

TEST(RunqlatExact, OneHistogramPrintedEveryIntervalLosesNothing)
{
    // The one histogram grows in the kernel; each interval prints its growth: the intervals'
    // counts must add up to every wait.
    expect_one_count_per_switch_in({"-p", "CHILD", "0.05"}, std::nullopt);
}

TEST(RunqlatExact, PerProcessHistogramOfTheSelectedComm)
{
    expect_one_count_per_switch_in({"-P", "--comm", "tpk-runqlat"}, "tpk-runqlat");
}
