// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// forksnoop against real forks: every child of a batch appears exactly once, with the right
// parent, comm and kind, through each attach type and transport.
#include "live.hpp"
#include "tool_run.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <algorithm>
#include <set>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace std::chrono_literals;
using tpkit::live::ForkBatch;
using tpkit::live::ToolRun;

namespace {

constexpr int children = 50;
constexpr int threads = 5;

// Runs marker forks by a process named `comm` until the tool shows one: the tool is attached
// and reading.
bool shows_marker_fork(ToolRun& tool, const std::string& comm)
{
    std::string pid;
    constexpr int marker_forks = 100; // 100 ms apart at most
    return tpkit::live::poke_until_line(
        tool, [&] { pid = std::to_string(tpkit::live::run_marker_fork(comm).children.at(0)); },
        [&](const std::string& l) { return tpkit::live::parse_flat_json(l)["child_pid"] == pid; },
        marker_forks, 100ms);
}

void wait_until_live(ToolRun& tool)
{
    if (!shows_marker_fork(tool, "tpk-marker"))
        FAIL() << "forksnoop never showed a marker fork; stderr: " << tool.stderr_text();
}

struct Seen {
    std::multiset<std::string> child_pids; // processes
    std::multiset<std::string> child_tids; // threads
    std::vector<std::map<std::string, std::string>> events;
};

Seen events_from(const ToolRun& tool, pid_t forker)
{
    Seen seen;
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (e["parent_pid"] != std::to_string(forker))
            continue;
        seen.events.push_back(e);
        if (e["kind"] == "process")
            seen.child_pids.insert(e["child_pid"]);
        else
            seen.child_tids.insert(e["child_tid"]);
    }
    return seen;
}

void expect_exact_batch(const std::vector<std::string>& extra_args)
{
    TPKIT_REQUIRE_LIVE();
    std::vector<std::string> argv{tpkit::live::tool_path("forksnoop"), "--json"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    ToolRun tool(argv);
    ASSERT_NO_FATAL_FAILURE(wait_until_live(tool));

    ForkBatch batch = tpkit::live::run_fork_batch("tpk-forker", children, threads);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    Seen seen = events_from(tool, batch.forker);
    ASSERT_EQ(seen.events.size(), std::size_t(children + threads));
    for (pid_t child : batch.children)
        EXPECT_EQ(seen.child_pids.count(std::to_string(child)), 1u) << "child " << child;
    for (pid_t tid : batch.threads)
        EXPECT_EQ(seen.child_tids.count(std::to_string(tid)), 1u) << "thread " << tid;
    for (auto& e : seen.events) {
        EXPECT_EQ(e["parent_comm"], "tpk-forker");
        EXPECT_EQ(e["child_comm"], "tpk-forker");
        EXPECT_EQ(e["parent_tid"], std::to_string(batch.forker));
        if (e["kind"] == "process")
            EXPECT_EQ(e["child_pid"], e["child_tid"]);
        else
            EXPECT_EQ(e["child_pid"], std::to_string(batch.forker)) << "a thread's pid is its tgid";
    }
    EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
}

// Processes and threads made at once by several threads of one process, each new thread
// exiting at once: the lists the classic program finds a child in change under it.
struct CloneStorm {
    pid_t forker = -1;
    std::set<pid_t> processes, threads;
};

struct CloneReport {
    char kind; // 'p' or 't'
    pid_t id;
};

int storm_fd = -1;

void report(char kind, pid_t id)
{
    CloneReport r{kind, id};
    if (::write(storm_fd, &r, sizeof(r)) != sizeof(r)) // below PIPE_BUF: whole or not at all
        _exit(97);
}

void* report_own_tid(void*)
{
    report('t', static_cast<pid_t>(syscall(SYS_gettid)));
    return nullptr;
}

// What each thread of the storm makes: itself, then storm_rounds times a process and a thread.
constexpr std::size_t storm_rounds = 40;

void* storm_worker(void*)
{
    report_own_tid(nullptr);
    for (std::size_t i = 0; i < storm_rounds; i++) {
        pid_t child = fork();
        if (child == 0)
            _exit(0);
        report('p', child);
        pthread_t t;
        if (pthread_create(&t, nullptr, report_own_tid, nullptr) != 0)
            _exit(96);
        pthread_join(t, nullptr);
        waitpid(child, nullptr, 0);
    }
    return nullptr;
}

CloneStorm run_clone_storm(int workers)
{
    int fds[2];
    if (pipe(fds) != 0)
        throw std::runtime_error("pipe failed");
    CloneStorm storm;
    storm.forker = fork();
    if (storm.forker == 0) {
        close(fds[0]);
        storm_fd = fds[1];
        prctl(PR_SET_NAME, "tpk-storm", 0, 0, 0);
        std::vector<pthread_t> running(static_cast<std::size_t>(workers));
        for (auto& t : running)
            if (pthread_create(&t, nullptr, storm_worker, nullptr) != 0)
                _exit(96);
        for (auto& t : running)
            pthread_join(t, nullptr);
        _exit(0);
    }
    close(fds[1]);
    CloneReport r{};
    while (::read(fds[0], &r, sizeof(r)) == sizeof(r))
        (r.kind == 'p' ? storm.processes : storm.threads).insert(r.id);
    close(fds[0]);
    int status = 0;
    waitpid(storm.forker, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("clone storm failed");
    return storm;
}

} // namespace

TEST(ForksnoopExact, TracepointSeesEveryForkExactlyOnce) { expect_exact_batch({}); }

TEST(ForksnoopExact, RawTracepointSeesEveryForkExactlyOnce) { expect_exact_batch({"--raw"}); }

TEST(ForksnoopExact, PerfBufferSeesEveryForkExactlyOnce) { expect_exact_batch({"--perf-buffer"}); }

TEST(ForksnoopExact, RawTracepointThroughPerfBuffer) { expect_exact_batch({"--raw", "--perf-buffer"}); }

TEST(ForksnoopLive, CommFilterKeepsOnlyThatParent)
{
    TPKIT_REQUIRE_LIVE();
    ToolRun tool({tpkit::live::tool_path("forksnoop"), "--json", "--comm", "tpk-wanted"});
    // Handshake through the filter: forks by tpk-wanted show up once attached.
    ASSERT_TRUE(shows_marker_fork(tool, "tpk-wanted")) << tool.stderr_text();
    constexpr std::size_t batch_children = 10;
    ForkBatch other = tpkit::live::run_fork_batch("tpk-other", batch_children, 0);
    ForkBatch wanted = tpkit::live::run_fork_batch("tpk-wanted", batch_children, 0);
    ASSERT_EQ(tool.stop(SIGTERM), 0) << tool.stderr_text();
    EXPECT_EQ(events_from(tool, other.forker).events.size(), 0u);
    EXPECT_EQ(events_from(tool, wanted.forker).events.size(), batch_children);
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (e.count("parent_comm")) {
            EXPECT_EQ(e["parent_comm"], "tpk-wanted") << line;
        }
    }
}

TEST(ForksnoopLive, PidOfAnotherProcessExcludesOurForks)
{
    TPKIT_REQUIRE_LIVE();
    // Filter on a process that never forks (a sleeping child): our batch must not appear.
    pid_t idle = fork();
    if (idle == 0) {
        pause();
        _exit(0);
    }
    ToolRun tool({tpkit::live::tool_path("forksnoop"), "--json", "--pid", std::to_string(idle),
                  "--duration", "2"});
    // The tool prints nothing until the end; make forks while it runs, then let it expire.
    constexpr int batches = 15, batch_children = 5; // a batch every 100 ms
    ForkBatch batch;
    for (int i = 0; i < batches; i++) {
        batch = tpkit::live::run_fork_batch("tpk-forker", batch_children, 0);
        std::this_thread::sleep_for(100ms);
    }
    int status = tool.wait(10s);
    kill(idle, SIGKILL);
    waitpid(idle, nullptr, 0);
    ASSERT_EQ(status, 0) << tool.stderr_text();
    ASSERT_FALSE(tool.lines().empty());
    EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (e.count("parent_pid")) {
            EXPECT_EQ(e["parent_pid"], std::to_string(idle)) << line;
        }
    }
}

// The classic record does not say whether a child is a thread; the program finds the child in
// its parent's lists. Under clones and exits from several threads at once it must still agree
// with what the workload made (and with --raw, which reads the child's tgid).
TEST(ForksnoopExact, KindIsRightUnderConcurrentClones)
{
    TPKIT_REQUIRE_LIVE();
    std::vector<std::unique_ptr<ToolRun>> tools;
    for (bool raw : {false, true}) {
        std::vector<std::string> argv{tpkit::live::tool_path("forksnoop"), "--json", "--comm", "tpk-storm"};
        if (raw)
            argv.push_back("--raw");
        tools.push_back(std::make_unique<ToolRun>(argv));
        ASSERT_TRUE(shows_marker_fork(*tools.back(), "tpk-storm")) << tools.back()->stderr_text();
    }
    constexpr std::size_t workers = 6;
    CloneStorm storm = run_clone_storm(workers);
    ASSERT_EQ(storm.processes.size(), workers * storm_rounds);
    ASSERT_EQ(storm.threads.size(), workers + workers * storm_rounds);
    for (auto& tool : tools) {
        ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
        Seen seen = events_from(*tool, storm.forker);
        EXPECT_EQ(seen.events.size(), storm.processes.size() + storm.threads.size());
        for (pid_t p : storm.processes)
            EXPECT_EQ(seen.child_pids.count(std::to_string(p)), 1u) << "process " << p;
        for (pid_t t : storm.threads)
            EXPECT_EQ(seen.child_tids.count(std::to_string(t)), 1u) << "thread " << t;
        for (auto& e : seen.events) {
            if (e["kind"] == "thread") {
                EXPECT_EQ(e["child_pid"], std::to_string(storm.forker));
            }
        }
        EXPECT_EQ(tool->lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    }
}
