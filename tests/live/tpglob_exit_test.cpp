// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A big glob of classic tracepoints gives the prompt back at once: the tool takes its programs
// off and unloads them, then exits, and a process of its own (tpkit-detach) closes the perf
// events, as slowly as the kernel makes it, out of the way. The events: every
// syscalls:sys_enter_* with --classic (one classic tracepoint each, ~345 on 6.1 and 6.18).
#include "live.hpp"
#include "tool_run.hpp"

#include "tpkit/engine/engine.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

const std::string glob = "syscalls:sys_enter_*";

// How many events the glob names here; nothing when too few for the test to mean anything.
std::optional<std::size_t> glob_events()
{
    const std::size_t n = tpkit::list_events(tpkit::live_events_root(), glob).size();
    return n >= 100 ? std::optional(n) : std::nullopt;
}

// While one lives, this process adopts the orphans of the processes it starts (the closer, once
// the tool's child that forked it is gone), so that a test can find and wait for them.
class Subreaper {
public:
    Subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1); }
    ~Subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 0); }
    Subreaper(const Subreaper&) = delete;
    Subreaper& operator=(const Subreaper&) = delete;
};

std::string proc_line(pid_t pid, const std::string& file)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/" + file);
    std::string line;
    std::getline(in, line);
    return line;
}

// The closer this process adopted: a child named tpkit-detach; nothing when there is none.
std::optional<pid_t> adopted_closer()
{
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const pid_t pid = std::stoi(name);
        const std::string stat = proc_line(pid, "stat"); // pid (comm) state ppid …
        const auto close = stat.rfind(')');
        if (close == std::string::npos || proc_line(pid, "comm") != "tpkit-detach")
            continue;
        if (std::stoi(stat.substr(close + 4)) == getpid())
            return pid;
    }
    return std::nullopt;
}

// Waits (a generous deadline: the kernel's grace periods, one per event) for the adopted closer
// to exit; its wait status, or nothing when it did not exit in time.
std::optional<int> wait_closer(pid_t pid)
{
    const auto deadline = std::chrono::steady_clock::now() + tpkit::live::patient(180s);
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        std::this_thread::sleep_for(20ms);
    }
    return std::nullopt;
}

std::vector<std::string> first_run_argv(const char* tool)
{
    return {tpkit::live::tool_path(tool), glob, "--classic", "-d", "0.3"};
}

// Runs TOOL over the glob until it exits on its own; its programs, gone when it has exited.
void run_glob_to_exit(const char* tool, std::size_t events)
{
    const auto before = tpkit::live::loaded_program_ids();
    ToolRun run(first_run_argv(tool));
    ASSERT_TRUE(run.wait_until_attached(events, 120s)) << run.stderr_text();
    const auto held = tpkit::live::programs_held_by(run.pid());
    ASSERT_FALSE(held.empty());
    // wait(): the exit, and stdout read to its end.
    ASSERT_EQ(run.wait(120s), 0) << run.stderr_text();
    EXPECT_TRUE(tpkit::live::wait_until_programs_unloaded(held, tpkit::live::patient(3s)))
        << "programs left loaded";
    tpkit::live::expect_none_left_behind(before, tool);
}

// Makes `calls` getppid() calls in a process named `comm`, done when this returns.
void getppid_calls(const char* comm, int calls)
{
    const pid_t pid = tpkit::live::start_child(comm, [calls] {
        for (int i = 0; i < calls; i++)
            syscall(SYS_getppid);
    });
    ASSERT_EQ(tpkit::live::reap(pid), 0);
}

} // namespace

// The tool exits, its output complete and its programs unloaded, while the closer still holds
// the perf events: it holds nothing else (no program, no pipe of the tool's, stdio on
// /dev/null), in a session of its own, and exits once it has closed them.
TEST(BigGlob, ExitsBeforeThePerfEventsAreClosed)
{
    TPKIT_REQUIRE_LIVE();
    const auto events = glob_events();
    if (!events)
        GTEST_SKIP() << "fewer than 100 " << glob << " events here";
    for (const char* tool : {"tpcount", "tpsnoop"}) {
        SCOPED_TRACE(tool);
        Subreaper subreaper;
        run_glob_to_exit(tool, *events);
        const auto closer = adopted_closer();
        ASSERT_TRUE(closer) << "no tpkit-detach process outlived " << tool;
        std::size_t perf_events = 0;
        std::error_code ec;
        for (const auto& entry :
             std::filesystem::directory_iterator("/proc/" + std::to_string(*closer) + "/fd", ec)) {
            const int fd = std::stoi(entry.path().filename().string());
            const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
            if (fd <= 2)
                EXPECT_EQ(target, "/dev/null") << "fd " << fd;
            else if (target == "anon_inode:[perf_event]")
                perf_events++;
            else if (!target.empty() && target != "/proc/" + std::to_string(*closer) + "/fd")
                // empty: closed meanwhile; its /proc/PID/fd: what it reads to find them
                ADD_FAILURE() << "the closer holds fd " << fd << ": " << target;
        }
        EXPECT_GT(perf_events, 0u);
        EXPECT_TRUE(tpkit::live::programs_held_by(*closer).empty());
        EXPECT_NE(getsid(*closer), getsid(0));
        const auto status = wait_closer(*closer);
        ASSERT_TRUE(status) << "tpkit-detach still running";
        EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "status " << *status;
    }
}

// A run started while the closer of the one before still closes its perf events (on the same
// tracepoints) attaches and counts exactly the events made during it.
TEST(BigGlob, ASecondRunRightAfterCountsOnlyItsOwnEvents)
{
    TPKIT_REQUIRE_LIVE();
    const auto events = glob_events();
    if (!events)
        GTEST_SKIP() << "fewer than 100 " << glob << " events here";
    constexpr const char* comm = "tpkit-glob2";
    Subreaper subreaper;
    run_glob_to_exit("tpcount", *events);
    const auto closer = adopted_closer();
    constexpr std::uint64_t calls_before = 5, calls_counted = 7;
    getppid_calls(comm, calls_before); // before the second run: not its own
    ToolRun second({tpkit::live::tool_path("tpcount"), "syscalls:sys_enter_getppid", "--classic",
                    "--comm", comm, "--json"});
    constexpr std::size_t links = 1; // sys_enter_getppid
    ASSERT_TRUE(second.wait_until_attached(links, 60s)) << second.stderr_text();
    const bool overlapped = closer && kill(*closer, 0) == 0;
    getppid_calls(comm, calls_counted);
    ASSERT_EQ(second.stop(SIGINT), 0) << second.stderr_text();
    std::uint64_t counted = 0;
    for (const auto& line : second.lines()) {
        auto obj = tpkit::live::parse_flat_json(line);
        if (obj["event"] == "syscalls:sys_enter_getppid")
            counted += std::stoull(obj["count"]);
    }
    EXPECT_EQ(counted, calls_counted);
    if (closer)
        EXPECT_TRUE(wait_closer(*closer)) << "tpkit-detach still running";
    std::printf("the second run attached %s the first run's closer had finished\n",
                overlapped ? "before" : "after");
}
