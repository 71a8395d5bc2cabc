// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Processes the benchmark runs and watches: spawned with their output in memory files, reaped
// with their resource usage, and (for tracers) waited on until their BPF programs are attached.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <tpkit/process/clock.hpp>

namespace tpbench {

using Clock = std::chrono::steady_clock;

// An anonymous in-memory file (memfd): a tool can write hundreds of MB of events into it
// without anyone having to read a pipe while the measurement runs.
class MemFile {
public:
    MemFile();
    ~MemFile();
    MemFile(const MemFile&) = delete;
    MemFile& operator=(const MemFile&) = delete;
    int fd() const { return fd_; }
    // Calls on_line for every line (without its '\n'), reading from the start in chunks.
    void for_each_line(const std::function<void(std::string_view)>& on_line) const;
    // Appends everything readable from fd until end of file (a pipe's writers all gone).
    void append_until_eof(int fd);
    // The first `limit` bytes, for error messages.
    std::string head(std::size_t limit = 4096) const;

private:
    int fd_;
};

struct Finished {
    bool exited = false;  // false: killed by a signal (or by us after the timeout)
    int code = -1;        // exit code, or the signal number when !exited
    bool timed_out = false;
    double wall_seconds = 0;
    double max_rss_mib = 0;
    bool ok() const { return exited && code == 0 && !timed_out; }
    std::string describe() const;
};

class Process {
public:
    // Starts argv[0] (searched in PATH) with stdout and stderr into the given files.
    Process(const std::vector<std::string>& argv, const MemFile& out, const MemFile& err)
        : Process(argv, out.fd(), err.fd())
    {
    }
    Process(const std::vector<std::string>& argv, int out_fd, int err_fd);
    ~Process(); // kills and reaps a process still running
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;

    pid_t pid() const { return pid_; }
    Clock::duration age() const { return Clock::now() - start_; }
    bool running();
    void signal(int sig);
    // Waits at most `timeout` for the exit, then SIGKILLs. Wall time counts from the start.
    Finished wait(std::chrono::milliseconds timeout);

private:
    pid_t pid_;
    Clock::time_point start_;
    std::optional<Finished> finished_;
};

// Blocks SIGUSR2 (the workload's "ready" signal) in this process; call once, first thing.
void block_ready_signal();
// Waits for SIGUSR2 from `pid`; false after the timeout or when the process died.
bool wait_ready_signal(Process& process, std::chrono::milliseconds timeout);

// BPF programs attached through the fds of a process, found with BPF_TASK_FD_QUERY: classic
// and raw tracepoints only (bpftrace's BEGIN/END uprobes are not counted).
struct Attachments {
    std::vector<std::uint32_t> prog_ids; // distinct
    int perf_event_fds = 0;              // perf counters without BPF (perf stat)
};
Attachments attachments_of(pid_t pid);

// Waits until `pid` has at least `programs` tracepoint programs attached (or, when programs is
// 0, perf event fds open); false when it exits first or after the timeout.
bool wait_attached(Process& process, int programs, std::chrono::milliseconds timeout,
                   Attachments& found);

// Kernel run-time statistics of BPF programs (BPF_ENABLE_STATS while an object of this class
// lives), sampled by program id.
class BpfRunStats {
public:
    BpfRunStats();
    ~BpfRunStats();
    BpfRunStats(const BpfRunStats&) = delete;
    BpfRunStats& operator=(const BpfRunStats&) = delete;
    bool enabled() const { return fd_ >= 0; }

    struct Sample {
        std::uint64_t run_time_ns = 0;
        std::uint64_t run_cnt = 0;
    };
    // Sums over the programs; ids that vanished are skipped.
    static Sample sample(const std::vector<std::uint32_t>& prog_ids);

private:
    int fd_;
};

// What a running process holds now: resident memory (VmRSS), open descriptors, the CPU time
// its threads have had (schedstat: ns, not the 10 ms ticks of /proc/PID/stat) and the kernel
// memory of the BPF maps it holds open (the memlock of their fdinfo).
struct Usage {
    double rss_mib = 0;
    std::size_t fds = 0;
    std::uint64_t cpu_ns = 0;
    double map_mib = 0;
};
std::optional<Usage> usage_of(pid_t pid); // nothing when it is gone

// "/usr/sbin/runqlat" for "runqlat" when it is on PATH or in /usr/sbin, /sbin; empty when not.
std::string find_program(std::string_view name);

// Debian's libbpf-tools' NAME (they install in /usr/sbin, where tpkit's own tools, installed,
// are not), or "" when not installed.
std::string libbpf_tool(std::string_view name);

} // namespace tpbench
