// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// wakeuptime against wake-ups of known number and length: a child's main thread (tpk-wakee)
// waits on a futex word `rounds` times, each time woken by its second thread (tpk-waker) from
// futex(2), once that has seen it asleep and slept a known time (futex_waits.hpp). Each of those
// blocks lasted at least the waker's sleep and at most the futex call the main thread timed.
#include "futex_waits.hpp"
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <signal.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

// Named, not anonymous: the live tests are compiled in unity batches.
namespace wakes {

constexpr int rounds = 6;
constexpr std::array<long, 2> sleeps_us = {10000, 20000};
// Between the two sleeps: -m takes the longer blocks only, -M the shorter.
constexpr long between_us = 15000;
constexpr const char* wakee = "tpk-wakee";
constexpr const char* waker = "tpk-waker";

// How long each futex call took in the child, as it saw it: shared with the test.
long* waited_ns = nullptr;

int woken_waits()
{
    return tpkit::live::woken_futex_waits(rounds, sleeps_us, waited_ns, waker);
}

// wakeuptime -p PID OPTIONS, once attached.
std::unique_ptr<ToolRun> wakeuptime(pid_t pid, std::vector<std::string> options)
{
    options.insert(options.begin(), {tpkit::live::tool_path("wakeuptime"), "-p", std::to_string(pid)});
    auto tool = std::make_unique<ToolRun>(options);
    constexpr std::size_t links = 2; // sched_switch, sched_waking
    if (!tool->wait_until_attached(links, 20s))
        ADD_FAILURE() << "wakeuptime did not attach: " << tool->stderr_text();
    return tool;
}

// The wake-ups the waker made from futex(2) itself ("__x64_sys_futex" and the like; its exit
// wakes the main thread too, from do_exit, when that waits in pthread_join).
bool from_futex_call(const std::string& stack)
{
    return stack.find("_sys_futex") != std::string::npos;
}

struct Summed {
    std::uint64_t count = 0, total_us = 0;
    std::size_t entries = 0;
};

// What the tool summed for the waker's futex wake-ups of the main thread.
Summed futex_wakeups(ToolRun& tool)
{
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.stderr_text(), "");
    Summed summed;
    for (const auto& line : tool.lines()) {
        auto w = tpkit::live::parse_flat_json(line);
        EXPECT_EQ(w["type"], "count") << line;
        EXPECT_TRUE(w["waker_stack"].starts_with("[")) << line;
        if (w["target"] != wakee || w["waker"] != waker || !from_futex_call(w["waker_stack"]))
            continue;
        summed.entries++;
        summed.count += std::stoull(w["count"]);
        summed.total_us += std::stoull(w["total_us"]);
    }
    return summed;
}

// Of the rounds, how many blocks were certainly at least `us` long (their waker slept that
// long), and how many may have been (the main thread's call lasted that long).
std::pair<std::uint64_t, std::uint64_t> blocks_of_at_least(long us)
{
    std::uint64_t surely = 0, maybe = 0;
    for (int i = 0; i < rounds; i++) {
        surely += sleeps_us[i % 2] >= us;
        maybe += waited_ns[i] / 1000 >= us;
    }
    return {surely, maybe};
}

} // namespace wakes

TEST(WakeuptimeExact, FutexWakeupsSummedByWakerStackAndTarget)
{
    TPKIT_REQUIRE_LIVE();
    wakes::waited_ns = static_cast<long*>(
        mmap(nullptr, wakes::rounds * sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(wakes::waited_ns, MAP_FAILED);
    tpkit::live::ScriptedChild child(wakes::wakee, {}, wakes::woken_waits);

    auto all = wakes::wakeuptime(child.pid(), {"--json"});
    auto longer = wakes::wakeuptime(child.pid(), {"--json", "-m", std::to_string(wakes::between_us)});
    auto shorter = wakes::wakeuptime(child.pid(), {"--json", "-M", std::to_string(wakes::between_us)});
    auto folded = wakes::wakeuptime(child.pid(), {"-f"});
    ASSERT_EQ(child.go_and_wait(), 0);

    // Every futex wake-up, in one place (one waker stack): each block between the waker's
    // sleep and the main thread's call.
    const wakes::Summed summed = wakes::futex_wakeups(*all);
    EXPECT_EQ(summed.entries, 1u);
    EXPECT_EQ(summed.count, std::uint64_t(wakes::rounds));
    std::uint64_t least_us = 0, most_us = 0;
    for (int i = 0; i < wakes::rounds; i++) {
        least_us += wakes::sleeps_us[i % 2];
        most_us += wakes::waited_ns[i] / 1000;
    }
    EXPECT_GE(summed.total_us, least_us);
    EXPECT_LE(summed.total_us, most_us);

    // -m and -M split them at between_us: each block is on the side its bounds put it, or on
    // either when they straddle it.
    const auto [surely_longer, maybe_longer] = wakes::blocks_of_at_least(wakes::between_us);
    const wakes::Summed at_least = wakes::futex_wakeups(*longer);
    EXPECT_GE(at_least.count, surely_longer);
    EXPECT_LE(at_least.count, maybe_longer);
    const wakes::Summed at_most = wakes::futex_wakeups(*shorter);
    EXPECT_GE(at_most.count, wakes::rounds - maybe_longer);
    EXPECT_LE(at_most.count, wakes::rounds - surely_longer);

    // Folded: waker;frames outermost first;target, then the microseconds: the futex call's
    // frames lead to try_to_wake_up, the innermost.
    ASSERT_EQ(folded->stop(SIGINT), 0) << folded->stderr_text();
    std::size_t futex_lines = 0;
    for (const auto& line : folded->lines()) {
        if (!line.starts_with(std::string(wakes::waker) + ";") || !wakes::from_futex_call(line))
            continue;
        futex_lines++;
        const auto space = line.rfind(' ');
        ASSERT_NE(space, std::string::npos) << line;
        EXPECT_EQ(line.substr(0, space).substr(line.rfind(';', space) + 1), wakes::wakee) << line;
        EXPECT_LT(line.find("_sys_futex"), line.find("try_to_wake_up")) << line;
        const std::uint64_t us = std::stoull(line.substr(space + 1));
        EXPECT_GE(us, least_us) << line;
        EXPECT_LE(us, most_us) << line;
    }
    EXPECT_EQ(futex_lines, 1u);
}

TEST(WakeuptimeLive, BadOptionsAreUsageErrors)
{
    for (std::vector<std::string> args : {std::vector<std::string>{"-f", "--json"},
                                          {"-m", "10", "-M", "5"}, {"-d", "1", "2"}, {"-m", "ten"},
                                          {"--perf-max-stack-depth", "500"}}) {
        args.insert(args.begin(), tpkit::live::tool_path("wakeuptime"));
        ToolRun run(args);
        EXPECT_EQ(run.wait(10s), 2) << args[1] << ": " << run.stderr_text();
        EXPECT_EQ(run.stderr_text().rfind("wakeuptime: ", 0), 0u) << run.stderr_text();
        EXPECT_EQ(std::count(run.stderr_text().begin(), run.stderr_text().end(), '\n'), 1);
    }
}
