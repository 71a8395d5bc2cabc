// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Children that make known scheduler events for runqlat, runqslower and cpudist: pinned to one
// CPU, optionally SCHED_FIFO (no CFS task preempts them then), with their context switches as the
// kernel counts them (/proc/PID/status), and the kernel's own record of the scheduler tracepoints
// for one task (a private ftrace instance).
#pragma once

#include "kit_probe.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tpkit/kernel/tracefs.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tpkit::live {

// The first CPU this process may run on.
inline int first_allowed_cpu()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        throw std::runtime_error("sched_getaffinity failed");
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set))
            return cpu;
    throw std::runtime_error("no CPU allowed");
}

// In a forked child: only this CPU, and SCHED_FIFO at `rt_priority` unless 0. False on failure.
inline bool pin_and_prioritize(int cpu, int rt_priority)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        return false;
    if (rt_priority == 0)
        return true;
    sched_param param{};
    param.sched_priority = rt_priority;
    return sched_setscheduler(0, SCHED_FIFO, &param) == 0;
}

// Runs on the CPU for `ns` nanoseconds of wall time without a system call (the vDSO's clock).
inline void spin_for(std::int64_t ns)
{
    auto now = [] {
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    };
    const std::int64_t end = now() + ns;
    while (now() < end) {
    }
}

inline void sleep_for_ns(long ns)
{
    timespec ts{ns / 1'000'000'000, ns % 1'000'000'000};
    syscall(SYS_nanosleep, &ts, nullptr);
}

// A task's context switches: voluntary ones (it blocked) and involuntary (preempted).
struct SwitchCounts {
    std::uint64_t voluntary = 0;
    std::uint64_t involuntary = 0;

    std::uint64_t all() const { return voluntary + involuntary; }
    SwitchCounts operator-(const SwitchCounts& earlier) const
    {
        return {voluntary - earlier.voluntary, involuntary - earlier.involuntary};
    }
};

inline SwitchCounts switch_counts(pid_t pid)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    SwitchCounts counts;
    for (std::string key; status >> key;) {
        if (key == "voluntary_ctxt_switches:")
            status >> counts.voluntary;
        else if (key == "nonvoluntary_ctxt_switches:")
            status >> counts.involuntary;
    }
    return counts;
}

// Whether pid sleeps (state S) in system call `nr` now, off the CPU: /proc/PID/syscall names the
// call only of a task that is not running.
inline bool sleeping_in(pid_t pid, long nr)
{
    const std::string proc = "/proc/" + std::to_string(pid);
    std::ifstream stat(proc + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto state_at = line.rfind(')') + 2; // after "PID (COMM) "
    std::ifstream syscall_file(proc + "/syscall");
    long current = -1;
    return state_at < line.size() && line[state_at] == 'S' && syscall_file >> current &&
           current == nr;
}

// In a GatedChild's act: sleeps until the test's next GatedChild::run_act step (SIGUSR1, blocked
// in the child and taken with sigwaitinfo: a wait that cannot end early, as a timer can in a slow
// virtual machine).
inline void await_step()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    syscall(SYS_rt_sigtimedwait, &set, nullptr, nullptr, _NSIG / 8);
}

// A child named `comm`, pinned to `cpu` (SCHED_FIFO at rt_priority unless 0), that runs `act`
// between two gates: asleep in read(2) until start(), then asleep in pause(2) once act is done,
// until it is killed. Its context switches between the gates are thus all of act's, plus one
// switch-in after the first gate and one switch-out into the second.
class GatedChild {
public:
    // act runs in a forked copy of a threaded process: raw system calls only, no allocation.
    GatedChild(const std::string& comm, int cpu, int rt_priority, void (*act)())
        : child_(
              comm,
              [=] {
                  sigset_t set;
                  sigemptyset(&set);
                  sigaddset(&set, SIGUSR1);
                  const bool blocked = sigprocmask(SIG_BLOCK, &set, nullptr) == 0;
                  return blocked && pin_and_prioritize(cpu, rt_priority) ? 0 : 1;
              },
              [=] {
                  act();
                  for (;;)
                      syscall(SYS_pause);
                  return 0;
              })
    {
        if (!wait_sleeping_in(SYS_read, std::chrono::seconds(10)))
            throw std::runtime_error(comm + " never slept at its first gate");
    }

    pid_t pid() const { return child_.pid(); }

    // Lets act run.
    void start() { child_.go(); }

    // Lets act run through `steps` calls of await_step(), each woken once the child sleeps in it
    // and `hold` has passed, and returns once the child sleeps at the second gate (off the CPU).
    void run_act(int steps = 0, std::chrono::microseconds hold = {})
    {
        start();
        for (int i = 0; i < steps; i++) {
            if (!wait_sleeping_in(SYS_rt_sigtimedwait, std::chrono::seconds(20)))
                throw std::runtime_error("the child never slept for its step " +
                                         std::to_string(i));
            std::this_thread::sleep_for(hold);
            kill(pid(), SIGUSR1);
        }
        if (!wait_sleeping_in(SYS_pause, std::chrono::seconds(20)))
            throw std::runtime_error("the child never slept at its second gate");
    }

private:
    bool wait_sleeping_in(long nr, std::chrono::milliseconds timeout)
    {
        return wait_until([&] { return sleeping_in(pid(), nr); }, timeout);
    }

    ScriptedChild child_;
};

// The values a histogram counted, all buckets together.
inline std::uint64_t total_count(const std::map<std::uint64_t, std::uint64_t>& buckets)
{
    std::uint64_t total = 0;
    for (const auto& [low, count] : buckets)
        total += count;
    return total;
}

// The values a histogram counted in buckets from `low` on.
inline std::uint64_t count_from(const std::map<std::uint64_t, std::uint64_t>& buckets,
                                std::uint64_t low)
{
    std::uint64_t total = 0;
    for (auto it = buckets.lower_bound(low); it != buckets.end(); ++it)
        total += it->second;
    return total;
}

// One scheduler event of a task, as ftrace recorded it.
struct SchedEvent {
    enum Kind { woken, switched_in, switched_out } kind;
    std::uint64_t ns;      // CLOCK_MONOTONIC, as bpf_ktime_get_ns (µs resolution)
    bool runnable = false; // switched_out: it stays runnable (R, or R+: preempted)
    pid_t other = 0;       // switched_in: the task switched out for it
};

// A private ftrace instance recording sched_wakeup, sched_wakeup_new and sched_switch of one
// task from construction on, removed with everything it set by the destructor.
class SchedTrace {
public:
    explicit SchedTrace(pid_t pid)
        : dir_(tpkit::tracefs_root() / "instances" / ("tpkit-sched-" + std::to_string(getpid()))),
          pid_(std::to_string(pid))
    {
        std::filesystem::create_directory(dir_);
        write("trace_clock", "mono");
        write("events/sched/sched_wakeup/filter", "pid == " + pid_);
        write("events/sched/sched_wakeup_new/filter", "pid == " + pid_);
        write("events/sched/sched_switch/filter",
              "prev_pid == " + pid_ + " || next_pid == " + pid_);
        for (const char* event : events_)
            write(std::string("events/sched/") + event + "/enable", "1");
    }
    ~SchedTrace()
    {
        for (const char* event : events_)
            std::ofstream(dir_ / "events/sched" / event / "enable") << "0" << std::flush;
        std::error_code ec;
        std::filesystem::remove(dir_, ec);
    }
    SchedTrace(const SchedTrace&) = delete;
    SchedTrace& operator=(const SchedTrace&) = delete;

    // What was recorded so far, in time order.
    std::vector<SchedEvent> events() const
    {
        static const std::regex line_re(R"( (\d+)\.(\d{6}): (sched_\w+): (.*))");
        static const std::regex switch_re(
            R"(prev_pid=(\d+) .*prev_state=(\S+) ==> .*next_pid=(\d+) )");
        std::ifstream in(dir_ / "trace");
        std::vector<SchedEvent> out;
        std::smatch m, f;
        for (std::string line; std::getline(in, line);) {
            if (!std::regex_search(line, m, line_re))
                continue;
            const std::uint64_t ns = (std::stoull(m[1]) * 1'000'000 + std::stoull(m[2])) * 1000;
            const std::string event = m[3], fields = m[4];
            if (event != "sched_switch") {
                out.push_back({SchedEvent::woken, ns});
            } else if (std::regex_search(fields, f, switch_re)) {
                if (f[3] == pid_)
                    out.push_back({SchedEvent::switched_in, ns, false, std::stoi(f[1])});
                else if (f[1] == pid_)
                    out.push_back({SchedEvent::switched_out, ns, f[2].str().rfind('R', 0) == 0});
            }
        }
        return out;
    }

private:
    static constexpr const char* events_[] = {"sched_wakeup", "sched_wakeup_new", "sched_switch"};

    void write(const std::string& file, const std::string& text) const
    {
        std::ofstream out(dir_ / file);
        out << text << std::flush;
        if (!out)
            throw std::runtime_error("cannot write " + (dir_ / file).string());
    }

    std::filesystem::path dir_;
    std::string pid_;
};

// Run-queue waits replayed on the kernel's record, as runqlat and runqslower time them: a wait
// begins when the task is woken or switched out still runnable, and ends at its next switch-in.
struct TracedWait {
    std::uint64_t us;
    pid_t prev; // the task switched out for it at its end
};

inline std::vector<TracedWait> traced_waits(const std::vector<SchedEvent>& events)
{
    std::vector<TracedWait> waits;
    std::optional<std::uint64_t> since;
    for (const auto& e : events) {
        if (e.kind == SchedEvent::switched_in) {
            if (since)
                waits.push_back({(e.ns - *since) / 1000, e.other});
            since.reset();
        } else if (e.kind == SchedEvent::woken || e.runnable) {
            since = e.ns;
        }
    }
    return waits;
}

// How often the record has the task switched in or out.
inline std::uint64_t traced_count(const std::vector<SchedEvent>& events, SchedEvent::Kind kind)
{
    std::uint64_t n = 0;
    for (const auto& e : events)
        n += e.kind == kind;
    return n;
}

// What a tool printed while a gated child acted, the child's context switches meanwhile, and
// the kernel's record of its scheduler events.
struct ActOutput {
    std::vector<std::string> lines;
    SwitchCounts switches;
    std::vector<SchedEvent> events;
};

// Runs `tool --json ARGS` ("CHILD" in ARGS stands for the child's PID) until it holds `links` BPF
// links, lets the child act (GatedChild::run_act with `steps` and `hold`) while SchedTrace
// records it, and stops the tool with SIGINT. Throws if the tool fails or writes to stderr.
//
// Why the record as well as the counters: the counters say what the child did, the record what
// the tracepoints reported, which is all a tool can see. They agree on Debian's 6.1; a 6.18 host
// was seen to leave some switches out of the tracepoint (those from init's threads: the task
// switched in after one is invisible to every tracer, ftrace included). The child's own
// switch-outs are all in the record (checked).
inline ActOutput run_tool_while_acting(const std::string& tool, std::vector<std::string> args,
                                       std::size_t links, GatedChild& child, int steps,
                                       std::chrono::microseconds hold = {})
{
    for (auto& arg : args)
        if (arg == "CHILD")
            arg = std::to_string(child.pid());
    args.insert(args.begin(), {tool_path(tool), "--json"});
    ToolRun run(args);
    if (!run.wait_until_attached(links, std::chrono::seconds(20)))
        throw std::runtime_error(tool + " did not attach: " + run.stderr_text());
    ActOutput out;
    {
        SchedTrace trace(child.pid());
        const SwitchCounts before = switch_counts(child.pid());
        child.run_act(steps, hold);
        out.switches = switch_counts(child.pid()) - before;
        out.events = trace.events();
    }
    if (run.stop(SIGINT) != 0 || !run.stderr_text().empty())
        throw std::runtime_error(tool + " failed: " + run.stderr_text());
    out.lines = run.lines();
    if (traced_count(out.events, SchedEvent::switched_out) != out.switches.all())
        throw std::runtime_error("the trace does not have every switch-out of the child");
    return out;
}

} // namespace tpkit::live
