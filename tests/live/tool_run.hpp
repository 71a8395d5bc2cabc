// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Runs a tpkit tool as a child process for live tests, and makes known kernel events.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tpkit::live {

// Path of a built tool: $TPKIT_BIN_DIR/NAME, else the build tree's bin/NAME (the 6.1 VM sets
// TPKIT_BIN_DIR: its binaries sit elsewhere).
std::string tool_path(const std::string& name);

// `timeout` times $TPKIT_TEST_SLOWDOWN (default 1): the VM test emulates its CPUs, many times
// slower than the host. Every wait of this file goes through it.
std::chrono::milliseconds patient(std::chrono::milliseconds timeout);

// A tool running with stdout and stderr captured.
class ToolRun {
public:
    // as_user: run as that user (privileges dropped) instead of root. A tpkit tool that traces
    // gets --ready-fd 3 after its name (wait_until_attached() reads it) unless argv has one.
    explicit ToolRun(const std::vector<std::string>& argv, std::optional<std::string> as_user = {});
    ~ToolRun();
    ToolRun(const ToolRun&) = delete;
    ToolRun& operator=(const ToolRun&) = delete;

    pid_t pid() const { return pid_; }

    // Reads stdout until a line satisfies pred (true) or the timeout passes (false). Every line
    // read is kept in lines().
    bool wait_for_line(const std::function<bool(const std::string&)>& pred,
                       std::chrono::milliseconds timeout);

    // Sends sig (if still running), reads everything to EOF, and returns the exit status
    // (exit code, or 128 + signal). A tool still running a patient 20 s later fails the test
    // and is killed (status 137).
    int stop(int sig);
    // Waits for the tool to exit on its own (bounded by timeout, then SIGKILL) and returns the
    // exit status as stop() does.
    int wait(std::chrono::milliseconds timeout);

    // Waits until the tool holds `links` BPF links (its tracepoints are attached) and, for
    // tpkit's tracing tools (run with --ready-fd), until it says "ready": counting, not only
    // attached. False after timeout or when it exited.
    bool wait_until_attached(std::size_t links, std::chrono::milliseconds timeout);
    // Waits until the tool holds no capability, not even in its bounding set: what a streaming
    // tool does once attached, its set-up over. False after timeout or when it exited.
    bool wait_until_unprivileged(std::chrono::milliseconds timeout);

    // A reader that stops reading: stdout's pipe shrinks to one page and is not read until the
    // tool exits. Waits for that (SIGKILL after timeout, status 137), then reads what it wrote.
    void shrink_stdout_pipe();
    int wait_without_reading_stdout(std::chrono::milliseconds timeout);

    const std::vector<std::string>& lines() const { return lines_; }
    // Whether stdout ended inside a line (the last of lines() has no newline).
    bool ended_mid_line() const { return ended_mid_line_; }
    const std::string& stderr_text() const { return stderr_; }

private:
    bool read_some(std::chrono::milliseconds timeout);
    void drain();
    bool try_reap(bool block);
    bool wait_until_ready(std::chrono::steady_clock::time_point deadline);

    pid_t pid_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    int ready_fd_ = -1; // read end of the tool's --ready-fd until it said "ready"
    std::string partial_;
    std::vector<std::string> lines_;
    std::size_t scanned_ = 0;
    std::string stderr_;
    std::optional<int> status_;
    bool ended_mid_line_ = false;
};

// `NAME --json OPTIONS` once it holds `links` BPF links (its tracepoints are attached); a test
// failure, saying why, when it does not attach in time.
std::unique_ptr<ToolRun> attached_json_tool(const std::string& name, std::vector<std::string> options,
                                            std::size_t links);

// What one batch of forks made: a "forker" process with a chosen comm creates `children`
// processes (each exits at once) and `threads` threads, then exits.
struct ForkBatch {
    pid_t forker = -1;
    std::vector<pid_t> children;
    std::vector<pid_t> threads;
};

ForkBatch run_fork_batch(const std::string& comm, int children, int threads);

// A marker fork: a batch of one child and no thread, whose forker a test looks for in a tool's
// output to know it is attached and read.
inline ForkBatch run_marker_fork(const std::string& comm)
{
    return run_fork_batch(comm, 1, 0);
}

// A child process that names itself `comm` and runs `body`; it exits 0 if the body returns.
pid_t start_child(const char* comm, const std::function<void()>& body);

// Waits for the child `pid` and gives its wait status.
int reap(pid_t pid);

// The members of the JSON object on a line (from its first '{'), as text: strings unescaped,
// other values as compact JSON (numbers, arrays, nested objects); empty when the line holds no
// JSON object.
std::map<std::string, std::string> parse_flat_json(const std::string& line);

// Runs `NAME --json ARGS` (with --include-self when `include_self`) until its set-up is over
// (attached, its capabilities dropped), stops it with SIGINT, and gives its JSON events of its
// own process (parse_flat_json), or one {"error": …} when it did not run so.
std::vector<std::map<std::string, std::string>> own_events(const std::string& name,
                                                           std::vector<std::string> args,
                                                           bool include_self);

// Buckets (low → count) summed over the histogram lines (JSON objects with "buckets") among
// `lines`, only those whose "key" is `key` when given; empty buckets left out.
std::map<std::uint64_t, std::uint64_t> histogram_buckets(const std::vector<std::string>& lines,
                                                         const std::optional<std::string>& key = {});

// How many values each histogram among `lines` counted, by its "key" ("" for an unsplit one).
std::map<std::string, std::uint64_t> histogram_totals(const std::vector<std::string>& lines);

// A BPF program a process holds open (a program or link file descriptor), as the kernel names it.
struct HeldProgram {
    std::uint32_t id = 0;
    std::string name;
    bool operator==(const HeldProgram&) const = default;
};

// The programs `pid` holds now, by ID, each once. The kernel hands out IDs cyclically (one is
// reused only after 2^31 more), so unlike names they tell one process's programs from another's
// loading the same tool.
std::vector<HeldProgram> programs_held_by(pid_t pid);

// Waits until none of these programs is loaded (with the same RCU allowance as above); false if
// some still are after `timeout`.
bool wait_until_programs_unloaded(const std::vector<HeldProgram>& programs,
                                  std::chrono::milliseconds timeout);

// The IDs of every BPF program loaded now.
std::set<std::uint32_t> loaded_program_ids();

// Programs loaded since `before` (loaded_program_ids()) that are still loaded after `timeout`
// (the kernel frees a closed program after an RCU grace period) while no process holds them:
// left behind by a process that is gone. Others' programs, held by their running processes,
// are not counted, so that this can be asked on a busy machine.
std::vector<HeldProgram> programs_left_behind(const std::set<std::uint32_t>& before,
                                              std::chrono::milliseconds timeout);

// Fails the running test for each program programs_left_behind(before, a patient 3 s) finds;
// `what` names the run in the message.
void expect_none_left_behind(const std::set<std::uint32_t>& before, const std::string& what = "");

// Empty when `text` is exactly one JSON object (RFC 8259, optional surrounding whitespace,
// valid UTF-8, no duplicate member names), else what is wrong (and where: the parser's message).
std::string json_object_problem(const std::string& text);

// Calls poke() and waits up to `each` for a line satisfying pred, up to `attempts` times: a
// handshake through the tool's own output that it is attached and its output is read.
bool poke_until_line(ToolRun& tool, const std::function<void()>& poke,
                     const std::function<bool(const std::string&)>& pred, int attempts,
                     std::chrono::milliseconds each);

// The usual pace of that handshake: a poke every 300 ms, 50 of them at most (15 s).
inline constexpr int poke_attempts = 50;
inline constexpr std::chrono::milliseconds poke_wait{300};

} // namespace tpkit::live
