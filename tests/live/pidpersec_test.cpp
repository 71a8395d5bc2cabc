// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// pidpersec against real new tasks: a child of a known PID creates known numbers of threads and
// processes; the counts of its intervals add up to exactly those, every task counted once.
#include "live.hpp"
#include "new_tasks.hpp"
#include "tool_run.hpp"

#include <fmt/format.h>

#include <signal.h>

#include <regex>
#include <string>

using namespace std::chrono_literals;
using tpkit::live::NewTaskChild;
using tpkit::live::NewTasks;
using tpkit::live::ToolRun;

namespace {

constexpr std::size_t pidpersec_links = 1;
constexpr int pidpersec_from_main = 12, pidpersec_from_spawner = 4, pidpersec_processes = 30;

} // namespace

TEST(PidpersecExact, CountsEveryProcessAndThreadOnce)
{
    TPKIT_REQUIRE_LIVE();
    NewTaskChild child("tpk-newtasks", pidpersec_from_main, pidpersec_from_spawner, pidpersec_processes);
    ToolRun tool({tpkit::live::tool_path("pidpersec"), "--json", "-p", std::to_string(child.pid())});
    ASSERT_TRUE(tool.wait_until_attached(pidpersec_links, 20s)) << tool.stderr_text();
    const NewTasks made = child.go_and_wait();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    ASSERT_EQ(made.threads.size(), std::size_t(pidpersec_from_main + 1 + pidpersec_from_spawner));
    ASSERT_EQ(made.processes.size(), std::size_t(pidpersec_processes));

    std::uint64_t count = 0, processes = 0, threads = 0;
    std::size_t intervals = 0;
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        ASSERT_EQ(e["type"], "count") << line;
        EXPECT_EQ(e["event"], "task:task_newtask") << line;
        const std::uint64_t p = std::stoull(e["processes"]), t = std::stoull(e["threads"]);
        EXPECT_EQ(std::stoull(e["count"]), p + t) << line;
        count += std::stoull(e["count"]);
        processes += p;
        threads += t;
        intervals++;
    }
    EXPECT_GE(intervals, 1u); // the last, at SIGINT
    EXPECT_EQ(processes, made.processes.size()) << fmt::format("{}", fmt::join(tool.lines(), "\n"));
    EXPECT_EQ(threads, made.threads.size()) << fmt::format("{}", fmt::join(tool.lines(), "\n"));
    EXPECT_EQ(count, made.processes.size() + made.threads.size());
    EXPECT_EQ(tool.stderr_text(), "");
}

TEST(PidpersecExact, TextIsBccsLineEverySecond)
{
    TPKIT_REQUIRE_LIVE();
    constexpr int from_main = 3, from_spawner = 2, processes = 6;
    NewTaskChild child("tpk-newtasks", from_main, from_spawner, processes);
    ToolRun tool({tpkit::live::tool_path("pidpersec"), "-p", std::to_string(child.pid())});
    ASSERT_TRUE(tool.wait_until_attached(pidpersec_links, 20s)) << tool.stderr_text();
    const NewTasks made = child.go_and_wait();
    // A line a second: one at least before SIGINT, then the last at SIGINT.
    ASSERT_TRUE(tool.wait_for_line([](const std::string&) { return true; }, 5s)) << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const std::regex bcc_line(R"(([0-2][0-9]:[0-5][0-9]:[0-6][0-9]): PIDs/sec: ([0-9]+))");
    std::uint64_t total = 0;
    for (const auto& line : tool.lines()) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(line, m, bcc_line)) << line;
        total += std::stoull(m[2]);
    }
    EXPECT_GE(tool.lines().size(), 2u);
    EXPECT_EQ(total, made.processes.size() + made.threads.size())
        << fmt::format("{}", fmt::join(tool.lines(), "\n"));
}
