// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The kernel's own record of events, as an oracle for live tests.
#pragma once

#include <tpkit/kernel/tracefs.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tpkit::live {

// A private trace instance: its own buffer, event enables and filters, so the test neither sees
// nor disturbs anyone else's tracing. Removing it drops all of that, also when a test fails.
class TraceInstance {
public:
    // Named tpkit-NAME-PID: tests of one run, or of runs beside each other, never share one.
    explicit TraceInstance(const std::string& name)
        : dir_(tpkit::tracefs_root() / "instances" /
               ("tpkit-" + name + "-" + std::to_string(getpid())))
    {
        std::filesystem::create_directory(dir_);
        // The default clock is per CPU: when the test migrates between CPUs, `trace` would merge
        // the CPUs' events out of order.
        std::ofstream(dir_ / "trace_clock") << "mono" << std::flush;
    }
    ~TraceInstance()
    {
        for (const auto& [system, event] : touched_) {
            write_quietly(event_dir(system, event) / "enable", "0");
            write_quietly(event_dir(system, event) / "filter", "0");
        }
        write_quietly(dir_ / "trace", "");
        std::error_code ec;
        std::filesystem::remove(dir_, ec);
    }
    TraceInstance(const TraceInstance&) = delete;
    TraceInstance& operator=(const TraceInstance&) = delete;

    const std::filesystem::path& dir() const { return dir_; }

    // EVENT empty: the whole SYSTEM (its own enable and filter files).
    std::filesystem::path event_dir(const std::string& system, const std::string& event) const
    {
        return dir_ / "events" / system / event;
    }

    // Writes the kernel filter; returns the kernel's complaint when it refuses it.
    std::string set_filter(const std::string& system, const std::string& event, const std::string& expr)
    {
        touched_.emplace_back(system, event);
        std::ofstream out(event_dir(system, event) / "filter");
        out << expr << std::flush;
        if (out)
            return "";
        std::ifstream in(event_dir(system, event) / "filter");
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }

    // A trace option of this instance only (options/NAME): "hash-ptr", "0".
    void set_option(const std::string& name, const std::string& value)
    {
        std::ofstream(dir_ / "options" / name) << value << std::flush;
    }

    void enable(const std::string& system, const std::string& event, bool on)
    {
        touched_.emplace_back(system, event);
        std::ofstream(event_dir(system, event) / "enable") << (on ? "1" : "0") << std::flush;
    }

    // The buffer's events, as they are.
    std::vector<std::string> lines() const
    {
        std::ifstream in(dir_ / "trace");
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);)
            if (!line.empty() && line[0] != '#')
                lines.push_back(line);
        return lines;
    }

    // The buffer's events, then empties it. Emptying stops the buffer's recording for a while
    // (the kernel waits for an RCU grace period, milliseconds on an emulated machine): only at
    // the end of what is watched.
    std::vector<std::string> take_lines()
    {
        auto taken = lines();
        std::ofstream(dir_ / "trace", std::ios::trunc).flush();
        return taken;
    }

private:
    static void write_quietly(const std::filesystem::path& file, const std::string& text)
    {
        std::ofstream out(file);
        out << text << std::flush;
    }

    std::filesystem::path dir_;
    std::vector<std::pair<std::string, std::string>> touched_;
};

// When the kernel frees a task of one comm (sched:sched_process_free): only after the task's
// last switch away. A reaped task still runs until then, and an interrupt there has its comm, so
// a test comparing what two tracers saw of that comm keeps both on until this has happened.
// Made before the task starts, so that its free cannot come first.
class FreedTaskWatch {
public:
    explicit FreedTaskWatch(const std::string& comm) : instance_("freed")
    {
        instance_.set_filter("sched", "sched_process_free", "comm == \"" + comm + "\"");
        instance_.enable("sched", "sched_process_free", true);
    }

    // Whether task `pid` was freed within `timeout` (others of the comm, its children, may be
    // freed before).
    bool wait(pid_t pid, std::chrono::milliseconds timeout)
    {
        const std::string freed = " pid=" + std::to_string(pid) + " ";
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            for (const auto& line : instance_.lines())
                if (line.find(freed) != std::string::npos)
                    return true;
            if (std::chrono::steady_clock::now() >= deadline)
                return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }

private:
    TraceInstance instance_;
};

// One line of the kernel's trace ("  comm-pid [001] d.h2. 123.456: TEXT"), or of tpsnoop's,
// which has no flags column.
struct TraceLine {
    std::string text;          // after "TIME: ": the event as its print fmt shows it
    bool in_interrupt = false; // the kernel's flags say h, s, H, z or Z ("d.h2.")
};

inline std::optional<TraceLine> parse_trace_line(const std::string& line)
{
    const std::size_t cpu_end = line.find("] ");
    const std::size_t at = cpu_end == std::string::npos ? cpu_end : line.find(": ", cpu_end);
    if (at == std::string::npos)
        return std::nullopt;
    const std::size_t context = cpu_end + 4; // the third character of the flags
    return TraceLine{.text = line.substr(at + 2),
                     .in_interrupt = context < at && std::strchr("hsHzZ", line[context]) != nullptr};
}

// The kernel builds each tracer's record on its own, one after the other, and a few fields read
// the task as it is then: sched_switch's prev_state of an exiting task's last switch reads its
// exit_state, which its parent's reap, on another CPU, turns from Z to X between the two records.
// Such a prev_state is shown as EXITED on both sides.
inline std::string without_exit_state(const std::string& text)
{
    static const std::regex exit_state(R"(^(sched_switch: .* prev_state=)[XZ]( ==> ))");
    return std::regex_replace(text, exit_state, "$1EXITED$2");
}

// The runs of its BPF programs that a tool said the kernel skipped (another BPF program was
// running on that CPU): the events it could not see, in interrupts and also in a task's own
// context (an event fired as another program's run ends: a wakeup of ksoftirqd, under load).
// 6.1 does not count them for tracepoints: 0 there.
inline std::uint64_t skipped_runs(const std::string& tool_stderr)
{
    static const std::regex said(R"((\d+) runs of its BPF programs skipped by the kernel)");
    std::uint64_t runs = 0;
    for (auto it = std::sregex_iterator(tool_stderr.begin(), tool_stderr.end(), said);
         it != std::sregex_iterator(); ++it)
        runs += std::stoull((*it)[1]);
    return runs;
}

} // namespace tpkit::live
