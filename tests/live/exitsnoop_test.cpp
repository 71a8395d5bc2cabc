// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// exitsnoop against real exits: children of known PIDs end with a known code, by a known signal
// (with a core dump), or thread by thread; each process end appears exactly once with what
// waitpid() says of it, and threads appear only with --threaded.
#include "live.hpp"
#include "tool_run.hpp"

#include <tpkit/process/signals.hpp>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

using Event = std::map<std::string, std::string>;

std::uint64_t monotonic_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::uint64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A pipe whose ends close with it.
struct Pipe {
    int read_end = -1, write_end = -1;
    Pipe()
    {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        read_end = fds[0];
        write_end = fds[1];
    }
    ~Pipe()
    {
        close(read_end);
        close(write_end);
    }
    void send(pid_t value) const
    {
        if (write(write_end, &value, sizeof(value)) != sizeof(value))
            _exit(90);
    }
    pid_t receive() const
    {
        pid_t value = 0;
        if (read(read_end, &value, sizeof(value)) != sizeof(value))
            _exit(91); // in the parent too: a child that died early is a broken test
        return value;
    }
};

pid_t gettid_now() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// exitsnoop --json with extra options, showing exits: a marker child exiting with
// `marker_code` until one appears.
std::unique_ptr<ToolRun> exitsnoop(std::vector<std::string> options, int marker_code = 0)
{
    options.insert(options.begin(), {tpkit::live::tool_path("exitsnoop"), "--json"});
    auto tool = std::make_unique<ToolRun>(options);
    std::string pid;
    constexpr int marker_exits = 100; // 100 ms apart at most
    bool live = tpkit::live::poke_until_line(
        *tool,
        [&] {
            pid_t child = tpkit::live::start_child("tpk-marker", [&] { _exit(marker_code); });
            tpkit::live::reap(child);
            pid = std::to_string(child);
        },
        [&](const std::string& l) { return tpkit::live::parse_flat_json(l)["pid"] == pid; },
        marker_exits, 100ms);
    if (!live)
        ADD_FAILURE() << "exitsnoop never showed a marker exit; stderr: " << tool->stderr_text();
    return tool;
}

// Stops the tool and returns its events of process `pid`, in order.
std::vector<Event> stop_and_take(ToolRun& tool, const std::set<pid_t>& pids)
{
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    std::vector<Event> events;
    for (const auto& line : tool.lines()) {
        Event e = tpkit::live::parse_flat_json(line);
        if (e.count("pid") && pids.count(std::stoi(e["pid"])))
            events.push_back(e);
    }
    return events;
}

std::vector<Event> of_pid(const std::vector<Event>& events, pid_t pid)
{
    std::vector<Event> out;
    for (const auto& e : events)
        if (e.at("pid") == std::to_string(pid))
            out.push_back(e);
    return out;
}

// The JSON number fields of a wait status, as exitsnoop writes them.
void expect_status(const Event& e, int status)
{
    EXPECT_EQ(e.at("exit_code"), tpkit::exit_status_text(status));
    EXPECT_EQ(e.at("code"), std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 0));
    EXPECT_EQ(e.at("signal"), std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0));
    EXPECT_EQ(e.at("core_dumped"), WIFSIGNALED(status) && WCOREDUMP(status) ? "1" : "0");
}

// A directory for a core dump, removed with what it holds.
class CoreDirectory {
public:
    CoreDirectory()
    {
        char dir[] = "/tmp/tpk-core-XXXXXX";
        if (!mkdtemp(dir))
            throw std::runtime_error("mkdtemp failed");
        path_ = dir;
    }
    ~CoreDirectory()
    {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// Whether a core dump lands in the dumping process's directory (core_pattern a plain name):
// then the test can dump one and remove it; elsewhere it would leave a file behind.
bool cores_land_in_cwd()
{
    std::ifstream file("/proc/sys/kernel/core_pattern");
    std::string pattern;
    std::getline(file, pattern);
    return !pattern.empty() && pattern.find('/') == std::string::npos && pattern[0] != '|';
}

// In a child: abort() with a core dump of a few kilobytes (no memory contents) into `dir`, where
// the kernel writes a dump when it can.
[[noreturn]] void abort_dumping_core(const std::string& dir, bool dump)
{
    rlimit limit{dump ? rlim_t(1) << 20 : 0, dump ? rlim_t(1) << 20 : 0};
    setrlimit(RLIMIT_CORE, &limit);
    int filter = open("/proc/self/coredump_filter", O_WRONLY);
    if (filter >= 0) {
        if (write(filter, "0", 1) != 1)
            _exit(92);
        close(filter);
    }
    if (chdir(dir.c_str()) != 0)
        _exit(93);
    signal(SIGABRT, SIG_DFL);
    abort();
}

} // namespace

TEST(ExitsnoopExact, ExitCodesAndSignals)
{
    TPKIT_REQUIRE_LIVE();
    auto tool = exitsnoop({});
    CoreDirectory cores;
    const bool dump = cores_land_in_cwd();

    const std::uint64_t before = monotonic_ns();
    Pipe go;
    pid_t exit7 = tpkit::live::start_child("tpk-exit7", [&] {
        go.receive();
        _exit(7);
    });
    // The child lives at least from here until it is told to go.
    const std::uint64_t forked = monotonic_ns();
    std::this_thread::sleep_for(50ms); // a lifetime to measure, not a synchronisation
    const std::uint64_t released = monotonic_ns();
    go.send(1);
    int exit7_status = tpkit::live::reap(exit7);
    const std::uint64_t reaped = monotonic_ns();

    pid_t exit0 = tpkit::live::start_child("tpk-exit0", [] { _exit(0); });
    int exit0_status = tpkit::live::reap(exit0);
    Pipe named;
    pid_t killed = tpkit::live::start_child("tpk-killed", [&] {
        named.send(1);
        for (;;)
            pause();
    });
    named.receive(); // killed once it has its name
    kill(killed, SIGKILL);
    int killed_status = tpkit::live::reap(killed);
    pid_t aborted = tpkit::live::start_child("tpk-abort", [&] { abort_dumping_core(cores.path(), dump); });
    int aborted_status = tpkit::live::reap(aborted);

    auto events = stop_and_take(*tool, {exit7, exit0, killed, aborted});
    const std::map<pid_t, std::pair<std::string, int>> expected{
        {exit7, {"tpk-exit7", exit7_status}},
        {exit0, {"tpk-exit0", exit0_status}},
        {killed, {"tpk-killed", killed_status}},
        {aborted, {"tpk-abort", aborted_status}},
    };
    ASSERT_EQ(events.size(), expected.size());
    for (const auto& [pid, what] : expected) {
        auto mine = of_pid(events, pid);
        ASSERT_EQ(mine.size(), 1u) << what.first;
        const Event& e = mine[0];
        EXPECT_EQ(e.at("pcomm"), what.first);
        EXPECT_EQ(e.at("tid"), std::to_string(pid));
        EXPECT_EQ(e.at("ppid"), std::to_string(getpid()));
        expect_status(e, what.second);
    }
    EXPECT_EQ(of_pid(events, exit7)[0].at("exit_code"), "code 7");
    EXPECT_EQ(of_pid(events, exit0)[0].at("exit_code"), "0");
    EXPECT_EQ(of_pid(events, killed)[0].at("exit_code"), "signal 9 (SIGKILL)");
    if (dump) {
        EXPECT_TRUE(WCOREDUMP(aborted_status)) << "no core dump in " << cores.path();
        EXPECT_EQ(of_pid(events, aborted)[0].at("exit_code"), "signal 6 (SIGABRT), core dumped");
    } else {
        EXPECT_EQ(of_pid(events, aborted)[0].at("exit_code"), tpkit::exit_status_text(aborted_status));
    }
    // The age is the child's life: from its fork to its exit.
    std::uint64_t age = std::stoull(of_pid(events, exit7)[0].at("age_ns"));
    EXPECT_GE(age, released - forked);
    EXPECT_LE(age, reaped - before);
}

TEST(ExitsnoopExact, FailedOnlyLeavesOutExitZero)
{
    TPKIT_REQUIRE_LIVE();
    auto tool = exitsnoop({"-x"}, 1);
    pid_t exit0 = tpkit::live::start_child("tpk-exit0", [] { _exit(0); });
    tpkit::live::reap(exit0);
    pid_t exit3 = tpkit::live::start_child("tpk-exit3", [] { _exit(3); });
    tpkit::live::reap(exit3);
    pid_t killed = tpkit::live::start_child("tpk-killed", [] { raise(SIGTERM); });
    tpkit::live::reap(killed);
    auto events = stop_and_take(*tool, {exit0, exit3, killed});
    ASSERT_EQ(events.size(), 2u); // exit3's and killed's
    EXPECT_EQ(of_pid(events, exit3).at(0).at("exit_code"), "code 3");
    EXPECT_EQ(of_pid(events, killed).at(0).at("exit_code"), "signal 15 (SIGTERM)");
}

namespace {

// A process whose thread exits first, alone, with code 3 (raw exit(), not exit_group()), and
// then the whole process with code 5. The process exits once the thread is gone from
// /proc/self/task (released, so past its exit tracepoint): pthread_join() returns as soon as the
// kernel clears the thread's TID, before that, and a kernel whose tracepoint does not say which
// exit ends the group (6.1) could then take the thread's for the last, both exits in flight.
struct ThreadThenProcess {
    pid_t pid = -1;
    pid_t thread = -1;
    int status = 0;
};

ThreadThenProcess run_thread_then_process()
{
    Pipe report;
    ThreadThenProcess run;
    run.pid = tpkit::live::start_child("tpk-threads", [&] {
        pthread_t thread;
        auto body = [](void* arg) -> void* {
            static_cast<Pipe*>(arg)->send(gettid_now());
            syscall(SYS_exit, 3);
            return nullptr;
        };
        if (pthread_create(&thread, nullptr, body, &report) != 0)
            _exit(94);
        pthread_join(thread, nullptr); // returns once the kernel has cleared the thread's TID
        const auto tasks = [] {
            return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                 std::filesystem::directory_iterator{});
        };
        constexpr int task_checks = 5000; // a millisecond apart
        for (int i = 0; i < task_checks && tasks() > 1; i++)
            usleep(1000);
        _exit(5);
    });
    run.thread = report.receive();
    run.status = tpkit::live::reap(run.pid);
    return run;
}

} // namespace

TEST(ExitsnoopExact, ThreadsOnlyWithThreaded)
{
    TPKIT_REQUIRE_LIVE();
    auto processes = exitsnoop({});
    ThreadThenProcess run = run_thread_then_process();
    auto events = stop_and_take(*processes, {run.pid});
    ASSERT_EQ(events.size(), 1u) << "the thread's exit is no process's";
    EXPECT_EQ(events[0].at("tid"), std::to_string(run.pid));
    EXPECT_EQ(events[0].at("exit_code"), "code 5");
    expect_status(events[0], run.status);

    auto threads = exitsnoop({"--threaded"});
    run = run_thread_then_process();
    events = stop_and_take(*threads, {run.pid});
    // In either order: the kernel wakes pthread_join() (clearing the TID, in exit_mm()) before
    // the exiting thread reaches the tracepoint.
    std::map<std::string, std::string> code_of_tid;
    for (const auto& e : events)
        code_of_tid[e.at("tid")] = e.at("exit_code");
    EXPECT_EQ(events.size(), 2u); // the thread's, the process's
    EXPECT_EQ(code_of_tid, (std::map<std::string, std::string>{
                               {std::to_string(run.thread), "code 3"},
                               {std::to_string(run.pid), "code 5"}}));
}

namespace {

// The leader pthread-exits first; its last thread, renamed, ends the process with exit_group(4).
struct LeaderFirst {
    pid_t pid = -1;
    pid_t last = -1;
    int status = 0;
};

bool is_zombie_thread(pid_t pid, pid_t tid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto paren = text.rfind(')');
    return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

// Pipes a thread of a child uses: it reports its TID on one and waits for a go on the other.
struct ThreadPipes {
    const Pipe* report;
    const Pipe* go;
};

LeaderFirst run_leader_first()
{
    Pipe report, go;
    ThreadPipes pipes{&report, &go};
    LeaderFirst run;
    run.pid = tpkit::live::start_child("tpk-lead", [&] {
        pthread_t thread;
        auto body = [](void* arg) -> void* {
            auto* p = static_cast<ThreadPipes*>(arg);
            prctl(PR_SET_NAME, "tpk-last", 0, 0, 0);
            p->report->send(gettid_now());
            p->go->receive();
            _exit(4); // exit_group()
        };
        if (pthread_create(&thread, nullptr, body, &pipes) != 0)
            _exit(95);
        syscall(SYS_exit, 0); // the leader alone
    });
    run.last = report.receive();
    // Only once the leader is a zombie does its last thread end the process.
    constexpr int zombie_checks = 1000; // a patient 10 ms apart
    for (int i = 0; i < zombie_checks && !is_zombie_thread(run.pid, run.pid); i++)
        std::this_thread::sleep_for(tpkit::live::patient(10ms));
    go.send(1);
    run.status = tpkit::live::reap(run.pid);
    return run;
}

} // namespace

TEST(ExitsnoopExact, ProcessEndsWithItsLastThreadNotItsLeader)
{
    TPKIT_REQUIRE_LIVE();
    auto processes = exitsnoop({});
    LeaderFirst run = run_leader_first();
    ASSERT_TRUE(WIFEXITED(run.status)) << run.status;
    auto events = stop_and_take(*processes, {run.pid});
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].at("tid"), std::to_string(run.last));
    EXPECT_EQ(events[0].at("pcomm"), "tpk-lead") << "the process's name is its leader's";
    EXPECT_EQ(events[0].at("exit_code"), "code 4");
    expect_status(events[0], run.status);

    auto threads = exitsnoop({"--threaded"});
    run = run_leader_first();
    events = stop_and_take(*threads, {run.pid});
    ASSERT_EQ(events.size(), 2u); // the leader's, then the last thread's
    EXPECT_EQ(events[0].at("tid"), std::to_string(run.pid));
    EXPECT_EQ(events[0].at("pcomm"), "tpk-lead");
    EXPECT_EQ(events[0].at("exit_code"), "0");
    EXPECT_EQ(events[1].at("tid"), std::to_string(run.last));
    EXPECT_EQ(events[1].at("pcomm"), "tpk-last");
    EXPECT_EQ(events[1].at("exit_code"), "code 4");
}

namespace {

constexpr int group_threads = 8;

// A process of 1 + group_threads threads, all blocked until its main thread calls
// exit_group(6), which takes them down together; returns its PID and the threads' TIDs.
std::pair<pid_t, std::set<pid_t>> run_group_exit()
{
    Pipe report, go;
    pid_t pid = tpkit::live::start_child("tpk-group", [&] {
        for (int i = 0; i < group_threads; i++) {
            pthread_t thread;
            auto body = [](void* arg) -> void* {
                static_cast<Pipe*>(arg)->send(gettid_now());
                for (;;)
                    pause();
            };
            if (pthread_create(&thread, nullptr, body, &report) != 0)
                _exit(96);
        }
        go.receive(); // every thread is up
        _exit(6);
    });
    std::set<pid_t> tids{pid};
    for (int i = 0; i < group_threads; i++)
        tids.insert(report.receive());
    go.send(1);
    int status = tpkit::live::reap(pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 6)
        ADD_FAILURE() << "group status " << status;
    return {pid, tids};
}

} // namespace

TEST(ExitsnoopExact, ExitGroupOfManyThreadsIsOneProcessExit)
{
    TPKIT_REQUIRE_LIVE();
    constexpr int processes = 10;
    auto tool = exitsnoop({});
    std::set<pid_t> pids;
    for (int i = 0; i < processes; i++)
        pids.insert(run_group_exit().first);
    auto events = stop_and_take(*tool, pids);
    ASSERT_EQ(events.size(), std::size_t(processes));
    for (pid_t pid : pids) {
        auto mine = of_pid(events, pid);
        ASSERT_EQ(mine.size(), 1u) << pid;
        EXPECT_EQ(mine[0].at("exit_code"), "code 6");
        EXPECT_EQ(mine[0].at("pcomm"), "tpk-group");
    }
}

TEST(ExitsnoopExact, ExitGroupWithThreadedShowsEveryThreadOnce)
{
    TPKIT_REQUIRE_LIVE();
    auto tool = exitsnoop({"--threaded"});
    auto [pid, tids] = run_group_exit();
    auto events = stop_and_take(*tool, {pid});
    std::multiset<pid_t> seen;
    for (const auto& e : events) {
        seen.insert(std::stoi(e.at("tid")));
        EXPECT_EQ(e.at("exit_code"), "code 6") << "the group's code, in every thread";
    }
    EXPECT_EQ(std::set<pid_t>(seen.begin(), seen.end()), tids);
    EXPECT_EQ(seen.size(), tids.size());
}
