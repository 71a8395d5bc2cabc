// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offcputime against a known block: a child of this test sleeps in nanosleep, called from a
// known function of this binary, for a known time; that stack must appear once, with the user
// function and the kernel's nanosleep frames named, and at least the time slept.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

constexpr long slept_ms = 300;
// How much later than the kernel's trace the tool may stamp the switch out: both at the same
// sched_switch, the trace's probe first, the tool's after the probes between (the other tools'
// stack walks), microseconds apart; on an emulated machine whose vCPU stalls between them,
// milliseconds (TPKIT_TEST_SLOWDOWN, as every wait of the tests).
const std::uint64_t probes_apart_us =
    static_cast<std::uint64_t>(tpkit::live::patient(std::chrono::milliseconds(1)).count()) * 1000;

// The system call is made here, not in libc: a user stack is walked by frame pointers, and
// libc's wrappers keep none, so their caller would be skipped; from here the first user frame
// is this function.
extern "C" TPKIT_NAMED_FRAME long tpk_sleep_here(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
#if defined(__x86_64__)
    long ret;
    asm volatile("syscall" : "=a"(ret) : "a"(SYS_nanosleep), "D"(&ts), "S"(0L) : "rcx", "r11", "memory");
    return ret;
#elif defined(__aarch64__)
    register long x8 asm("x8") = SYS_nanosleep;
    register long x0 asm("x0") = reinterpret_cast<long>(&ts);
    register long x1 asm("x1") = 0;
    asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
    return x0;
#else
    return syscall(SYS_nanosleep, &ts, nullptr);
#endif
}

namespace {

// A child named tpk-offcpu that sleeps slept_ms in tpk_sleep_here at each act_once() (0 when the
// nanosleep returned 0), alive until destroyed, so that the tool can read its mappings when it
// prints.
tpkit::live::ScriptedChild sleeper()
{
    return {"tpk-offcpu", {}, [] { return tpk_sleep_here(slept_ms) == 0 ? 0 : 2; },
            tpkit::live::ScriptedChild::Acts::on_request};
}

std::unique_ptr<ToolRun> offcputime(const tpkit::live::ScriptedChild& sleeper, std::vector<std::string> options)
{
    // 16,384 buckets (the default, given as the option): the stacks the tests look for must not
    // collide with the sleeper's few others, 16 times less likely than in 1,024.
    options.insert(options.begin(), {tpkit::live::tool_path("offcputime"), "-p",
                                     std::to_string(sleeper.pid()), "--stack-storage-size", "16384"});
    auto tool = std::make_unique<ToolRun>(options);
    constexpr std::size_t links = 1; // sched_switch
    if (!tool->wait_until_attached(links, 20s))
        ADD_FAILURE() << "offcputime did not attach: " << tool->stderr_text();
    return tool;
}

std::vector<nlohmann::json> stacks_of(ToolRun& tool)
{
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.stderr_text(), "");
    std::vector<nlohmann::json> stacks;
    for (const auto& line : tool.lines()) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        EXPECT_TRUE(j.is_object()) << line;
        if (j.is_object())
            stacks.push_back(j);
    }
    return stacks;
}

bool has_frame(const nlohmann::json& frames, const std::string& part)
{
    for (const auto& f : frames)
        if (f.get<std::string>().find(part) != std::string::npos)
            return true;
    return false;
}

bool starts_in_sleep_here(const nlohmann::json& s)
{
    return !s["user_stack"].empty() && s["user_stack"][0] == "tpk_sleep_here";
}

// The least time the sleep is off CPU, from the kernel's own trace: from the sleeper's switch
// out asleep (sched_switch, state S) to the earliest its timer may wake it (hrtimer_start's
// softexpires, CLOCK_MONOTONIC as the trace clock). Less than slept_ms by the path from arming
// the timer to switching out, which can last tens of milliseconds on a busy virtual machine (its
// vCPU not running), so no fixed bound holds. (The switch back in is no end: on this machine the
// trace has only about a third of the sched_switch events from the idle task.)
class SleepTrace {
public:
    explicit SleepTrace(pid_t sleeper) : trace_("offcputime"), pid_(std::to_string(sleeper))
    {
        EXPECT_EQ(trace_.set_filter("sched", "sched_switch", "prev_pid == " + pid_), "");
        EXPECT_EQ(trace_.set_filter("timer", "hrtimer_start", "common_pid == " + pid_), "");
        trace_.enable("sched", "sched_switch", true);
        trace_.enable("timer", "hrtimer_start", true);
    }

    // After the sleep: its least microseconds off CPU.
    std::uint64_t least_off_cpu_us()
    {
        static const std::regex timer_re(R"(hrtimer_start: .*function=hrtimer_wakeup .*softexpires=(\d+))");
        static const std::regex switch_re(R"( (\d+)\.(\d{6}): sched_switch: .*prev_state=S )");
        std::optional<std::uint64_t> wakes_ns;
        std::smatch m;
        for (const auto& line : trace_.take_lines()) {
            if (std::regex_search(line, m, timer_re)) {
                wakes_ns = std::stoull(m[1]);
            } else if (wakes_ns && std::regex_search(line, m, switch_re)) {
                const std::uint64_t asleep_us = std::stoull(m[1]) * 1000000 + std::stoull(m[2]);
                return *wakes_ns / 1000 - asleep_us;
            }
        }
        ADD_FAILURE() << "the kernel traced no sleep of " << pid_;
        return 0;
    }

private:
    tpkit::live::TraceInstance trace_;
    std::string pid_;
};

// The sleep itself. The sleeper may also be preempted on its way into the sleep or out of it
// (often, on a busy or emulated machine): another block with the same user frame, of another
// kernel stack, and short.
bool is_the_sleep(const nlohmann::json& s, std::uint64_t least_off_cpu_us)
{
    return starts_in_sleep_here(s) &&
           s["total_us"].get<std::uint64_t>() + probes_apart_us >= least_off_cpu_us;
}

std::size_t count_sleeps(const std::vector<nlohmann::json>& stacks, std::uint64_t least_off_cpu_us)
{
    return std::count_if(stacks.begin(), stacks.end(),
                         [&](const nlohmann::json& s) { return is_the_sleep(s, least_off_cpu_us); });
}

} // namespace

TEST(OffcputimeExact, SleepInAKnownFunctionIsOneBlockWithBothStacks)
{
    TPKIT_REQUIRE_LIVE();
    auto sleeper = ::sleeper();
    SleepTrace trace(sleeper.pid());
    auto tool = offcputime(sleeper, {"--json"});
    ASSERT_EQ(sleeper.act_once(), 0);
    auto stacks = stacks_of(*tool);
    const std::uint64_t least_us = trace.least_off_cpu_us();
    ASSERT_EQ(count_sleeps(stacks, least_us), 1u)
        << "the kernel traced at least " << least_us << " us: " << nlohmann::json(stacks).dump();
    for (const auto& s : stacks) {
        EXPECT_EQ(s["pid"], sleeper.pid()) << s; // -p keeps only the sleeper
        if (!is_the_sleep(s, least_us))
            continue;
        EXPECT_EQ(s["tid"], sleeper.pid());
        EXPECT_EQ(s["comm"], "tpk-offcpu");
        EXPECT_EQ(s["count"], 1);
        EXPECT_TRUE(has_frame(s["kernel_stack"], "nanosleep")) << s;
        // The kernel stack starts where the task blocked, not in the tool's own program.
        EXPECT_FALSE(has_frame(s["kernel_stack"], "bpf_")) << s;
        EXPECT_FALSE(has_frame(s["kernel_stack"], "traceiter")) << s;
    }
}

TEST(OffcputimeExact, FoldedLineAndWhatEachFilterKeeps)
{
    TPKIT_REQUIRE_LIVE();
    auto sleeper = ::sleeper();
    SleepTrace trace(sleeper.pid());
    // One sleep, watched by one tool per option at once.
    auto folded = offcputime(sleeper, {"-f"});
    auto kernel_stacks = offcputime(sleeper, {"--json", "-K"});
    auto user_stacks = offcputime(sleeper, {"--json", "-U"});
    auto interruptible = offcputime(sleeper, {"--json", "--state", "1"});
    auto uninterruptible = offcputime(sleeper, {"--json", "--state", "2"});
    auto longer = offcputime(sleeper, {"--json", "-m", std::to_string(slept_ms * 1000 / 2)});
    auto shorter = offcputime(sleeper, {"--json", "-M", std::to_string(slept_ms * 1000 / 2)});
    auto kernel_threads = offcputime(sleeper, {"--json", "-k"});
    ASSERT_EQ(sleeper.act_once(), 0);
    const std::uint64_t least_us = trace.least_off_cpu_us();
    const std::uint64_t half_us = slept_ms * 1000 / 2;
    // Never so near -m and -M's bound that the tool's time and the trace's fall on both sides.
    ASSERT_GT(least_us, half_us + probes_apart_us) << "the sleep was off CPU for less than half";

    // comm;user frames;kernel frames, outermost first, then the microseconds.
    ASSERT_EQ(folded->stop(SIGINT), 0) << folded->stderr_text();
    std::size_t folded_sleeps = 0;
    for (const auto& line : folded->lines()) {
        auto here = line.find(";tpk_sleep_here;");
        if (here == std::string::npos)
            continue;
        auto space = line.rfind(' ');
        ASSERT_NE(space, std::string::npos) << line;
        if (std::stoull(line.substr(space + 1)) + probes_apart_us < least_us)
            continue; // a preemption on the way into the sleep or out of it: short
        folded_sleeps++;
        EXPECT_EQ(line.rfind("tpk-offcpu;", 0), 0u) << line;
        auto nanosleep = line.find("nanosleep", here);
        EXPECT_NE(nanosleep, std::string::npos) << "kernel frames after the user ones: " << line;
    }
    EXPECT_EQ(folded_sleeps, 1u);

    // -K: kernel stacks only; the sleep is still one entry.
    std::size_t kernel_only = 0;
    for (const auto& s : stacks_of(*kernel_stacks)) {
        EXPECT_TRUE(s["user_stack"].empty()) << s;
        const auto us = s["total_us"].get<std::uint64_t>();
        if (has_frame(s["kernel_stack"], "nanosleep") && us + probes_apart_us >= least_us)
            kernel_only++;
    }
    EXPECT_EQ(kernel_only, 1u);
    // -U: user stacks only.
    auto user_only = stacks_of(*user_stacks);
    EXPECT_EQ(count_sleeps(user_only, least_us), 1u);
    for (const auto& s : user_only)
        EXPECT_TRUE(s["kernel_stack"].empty()) << s;
    // nanosleep sleeps interruptibly (state 1), for longer than -m and not less than -M.
    EXPECT_EQ(count_sleeps(stacks_of(*interruptible), least_us), 1u);
    EXPECT_EQ(count_sleeps(stacks_of(*uninterruptible), least_us), 0u);
    EXPECT_EQ(count_sleeps(stacks_of(*longer), least_us), 1u);
    EXPECT_EQ(count_sleeps(stacks_of(*shorter), least_us), 0u);
    // The sleeper is no kernel thread.
    EXPECT_TRUE(stacks_of(*kernel_threads).empty());
}

TEST(OffcputimeLive, BadOptionsAreUsageErrors)
{
    for (std::vector<std::string> args : {std::vector<std::string>{"-u", "-k"}, {"-U", "-K"},
                                          {"-f", "--json"}, {"-m", "10", "-M", "5"},
                                          {"-d", "1", "2"}, {"-m", "ten"}}) {
        args.insert(args.begin(), tpkit::live::tool_path("offcputime"));
        ToolRun run(args);
        EXPECT_EQ(run.wait(10s), 2) << args[1] << " " << args[2] << ": " << run.stderr_text();
        EXPECT_EQ(run.stderr_text().rfind("offcputime: ", 0), 0u) << run.stderr_text();
        EXPECT_EQ(std::count(run.stderr_text().begin(), run.stderr_text().end(), '\n'), 1);
    }
}
