// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// wqlat against work queued a known number of times: every read of /proc/sys/vm/stat_refresh
// runs vmstat_refresh(), which queues refresh_vm_stats once on each online CPU
// (schedule_on_each_cpu) and waits for all of them to finish, in the reader's own context — so
// a process that reads it N times queues exactly N × CPUs work items of that function, and
// they have all started before its read returns. The same holds on 6.1 and 6.18.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr const char* stat_refresh = "/proc/sys/vm/stat_refresh";
constexpr int reads = 5;

// Reads stat_refresh `reads` times: raw system calls only, as a child of a threaded process.
int read_stat_refresh()
{
    for (int i = 0; i < reads; i++) {
        int fd = open(stat_refresh, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return 10 + i;
        char buf[16];
        if (read(fd, buf, sizeof(buf)) < 0) {
            close(fd);
            return 20 + i;
        }
        close(fd);
    }
    return 0;
}

// A child named tpk-wqlat that reads stat_refresh when told to, then exits (0 when every read
// went through).
tpkit::live::ScriptedChild reader()
{
    return {"tpk-wqlat", {}, read_stat_refresh};
}

std::unique_ptr<ToolRun> wqlat(std::vector<std::string> options)
{
    constexpr std::size_t links = 2; // its raw tracepoints queue_work and execute_start
    return tpkit::live::attached_json_tool("wqlat", std::move(options), links);
}

// The histograms wqlat printed at SIGINT, by work function.
std::map<std::string, std::map<std::string, std::string>> histograms(ToolRun& tool)
{
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.stderr_text(), "");
    std::map<std::string, std::map<std::string, std::string>> by_function;
    for (const auto& line : tool.lines()) {
        auto h = tpkit::live::parse_flat_json(line);
        EXPECT_EQ(h["event"], "workqueue:workqueue_execute_start") << line;
        EXPECT_EQ(by_function.count(h["key"]), 0u) << "twice: " << line;
        by_function[h["key"]] = h;
    }
    return by_function;
}

} // namespace

TEST(WqlatExact, StatRefreshQueuesRefreshVmStatsOncePerOnlineCpu)
{
    TPKIT_REQUIRE_LIVE();
    if (access(stat_refresh, R_OK) != 0)
        GTEST_SKIP() << stat_refresh << " is absent on this kernel";
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    ASSERT_GT(cpus, 0);
    const std::string expected = std::to_string(reads * cpus);

    auto reader = ::reader();
    const std::string pid = std::to_string(reader.pid());
    auto every_function = wqlat({"-p", pid});
    auto one_function = wqlat({"-p", pid, "-w", "refresh_vm_stats", "-m"});
    ASSERT_EQ(reader.go_and_wait(), 0);

    auto all = histograms(*every_function);
    ASSERT_EQ(all.count("refresh_vm_stats"), 1u) << "functions: " << all.size();
    EXPECT_EQ(all["refresh_vm_stats"]["total"], expected);
    EXPECT_EQ(all["refresh_vm_stats"]["unit"], "usecs");

    // -w: that function only; -m: in milliseconds.
    auto one = histograms(*one_function);
    ASSERT_EQ(one.size(), 1u);
    ASSERT_EQ(one.count("refresh_vm_stats"), 1u);
    EXPECT_EQ(one["refresh_vm_stats"]["total"], expected);
    EXPECT_EQ(one["refresh_vm_stats"]["unit"], "msecs");
    EXPECT_EQ(one["refresh_vm_stats"]["field"], "msecs");
}

TEST(WqlatExact, FunctionFilterWithoutTaskFilter)
{
    TPKIT_REQUIRE_LIVE();
    if (access(stat_refresh, R_OK) != 0)
        GTEST_SKIP() << stat_refresh << " is absent on this kernel";
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    auto tool = wqlat({"-w", "refresh_vm_stats"});
    auto reader = ::reader();
    ASSERT_EQ(reader.go_and_wait(), 0);
    auto hists = histograms(*tool);
    // Only that function; others on the machine may read stat_refresh meanwhile: at least ours.
    ASSERT_EQ(hists.size(), 1u);
    ASSERT_EQ(hists.count("refresh_vm_stats"), 1u);
    EXPECT_GE(std::stol(hists["refresh_vm_stats"]["total"]), reads * cpus);
}

TEST(WqlatLive, UnknownFunctionIsUsageError)
{
    TPKIT_REQUIRE_LIVE(); // /proc/kallsyms shows addresses to root
    ToolRun run({tpkit::live::tool_path("wqlat"), "-w", "tpk_no_such_function", "-d", "5"});
    EXPECT_EQ(run.wait(20s), 2) << run.stderr_text();
    EXPECT_EQ(run.stderr_text(), "wqlat: -w tpk_no_such_function: no kernel function of that name\n");
    EXPECT_TRUE(run.lines().empty());
}
