// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// threadsnoop against real threads: a child of a known PID creates threads from its main thread
// and from another of its threads, and forks processes; each thread appears exactly once, with
// the PID, TID and comm of the thread that created it, and no process appears.
#include "live.hpp"
#include "new_tasks.hpp"
#include "tool_run.hpp"

#include <fmt/format.h>

#include <signal.h>

#include <map>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::NewTaskChild;
using tpkit::live::NewTasks;
using tpkit::live::ToolRun;

namespace {

constexpr std::size_t threadsnoop_links = 1;
constexpr int threads_from_main = 20, threads_from_spawner = 7, threadsnoop_processes = 5;

// The tool's JSON events, by the new thread's TID.
std::map<std::string, std::vector<std::map<std::string, std::string>>> new_threads_of(const ToolRun& tool)
{
    std::map<std::string, std::vector<std::map<std::string, std::string>>> seen;
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (e["type"] == "event")
            seen[e["child_tid"]].push_back(e);
    }
    return seen;
}

void expect_every_thread_once(const std::vector<std::string>& extra_args)
{
    TPKIT_REQUIRE_LIVE();
    NewTaskChild child("tpk-threads", threads_from_main, threads_from_spawner, threadsnoop_processes);
    std::vector<std::string> argv{tpkit::live::tool_path("threadsnoop"), "--json", "-p",
                                  std::to_string(child.pid())};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    ToolRun tool(argv);
    ASSERT_TRUE(tool.wait_until_attached(threadsnoop_links, 20s)) << tool.stderr_text();
    const NewTasks made = child.go_and_wait();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    ASSERT_EQ(made.threads.size(), std::size_t(threads_from_main + 1 + threads_from_spawner));
    ASSERT_EQ(made.processes.size(), std::size_t(threadsnoop_processes));
    const auto seen = new_threads_of(tool);
    ASSERT_EQ(seen.size(), made.threads.size()) << fmt::format("{}", fmt::join(tool.lines(), "\n"));
    for (const auto& thread : made.threads) {
        SCOPED_TRACE(fmt::format("thread {} made by {}", thread.tid, thread.creator));
        auto it = seen.find(std::to_string(thread.tid));
        ASSERT_NE(it, seen.end());
        ASSERT_EQ(it->second.size(), 1u);
        auto e = it->second[0];
        EXPECT_EQ(e["pid"], std::to_string(child.pid()));
        EXPECT_EQ(e["tid"], std::to_string(thread.creator));
        EXPECT_EQ(e["comm"], "tpk-threads");
    }
    for (pid_t p : made.processes)
        EXPECT_FALSE(seen.contains(std::to_string(p))) << "process " << p << " shown as a thread";
    EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
}

} // namespace

TEST(ThreadsnoopExact, EveryThreadOnceWithItsCreator) { expect_every_thread_once({}); }

TEST(ThreadsnoopExact, PerfBufferEveryThreadOnceWithItsCreator) { expect_every_thread_once({"--perf-buffer"}); }

TEST(ThreadsnoopExact, TextRowsHaveTheColumns)
{
    TPKIT_REQUIRE_LIVE();
    constexpr int from_main = 1, from_spawner = 0, processes = 0;
    NewTaskChild child("tpk-threads", from_main, from_spawner, processes);
    ToolRun tool({tpkit::live::tool_path("threadsnoop"), "-p", std::to_string(child.pid())});
    ASSERT_TRUE(tool.wait_until_attached(threadsnoop_links, 20s)) << tool.stderr_text();
    const NewTasks made = child.go_and_wait();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    ASSERT_EQ(made.threads.size(), 2u); // one from main, the spawner
    const auto& lines = tool.lines();
    ASSERT_EQ(lines.size(), 1u + made.threads.size()) << fmt::format("{}", fmt::join(lines, "\n"));
    EXPECT_EQ(lines[0], "TIME         PID     TID COMM             NEWTID");
    constexpr std::size_t time_width = 8; // "HH:MM:SS"
    for (std::size_t i = 0; i < made.threads.size(); i++) {
        ASSERT_GT(lines[1 + i].size(), time_width);
        EXPECT_EQ(lines[1 + i].substr(time_width),
                  fmt::format(" {:>7} {:>7} {:<16} {}", child.pid(), made.threads[i].creator,
                              "tpk-threads", made.threads[i].tid));
    }
}
