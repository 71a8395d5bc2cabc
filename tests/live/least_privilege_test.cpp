// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Once attached, the streaming tools hold no capability at all: reading their buffers and
// detaching need none. Each still sees every event, exits 0 on SIGINT and leaves nothing loaded.
#include "fork_events.hpp"
#include "live.hpp"
#include "tool_run.hpp"

#include <signal.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <tpkit/run/tool.hpp>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

// CapInh, CapPrm, CapEff, CapBnd, CapAmb and NoNewPrivs of /proc/PID/status.
std::map<std::string, std::uint64_t> capability_lines(pid_t pid)
{
    std::map<std::string, std::uint64_t> caps;
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);) {
        const auto colon = line.find(':');
        const std::string name = line.substr(0, colon);
        if (name.starts_with("Cap") || name == "NoNewPrivs")
            caps[name] = std::stoull(line.substr(colon + 1), nullptr, name == "NoNewPrivs" ? 10 : 16);
    }
    return caps;
}

void expect_streams_without_capabilities(std::vector<std::string> argv)
{
    TPKIT_REQUIRE_LIVE();
    const std::string comm = "tpk-leastpriv";
    argv.insert(argv.end(), {"--json", "--comm", comm});
    ToolRun tool(argv);
    ASSERT_TRUE(tpkit::live::shows_a_fork(tool, comm)) << tool.stderr_text();

    auto caps = capability_lines(tool.pid());
    ASSERT_TRUE(caps.contains("CapEff")) << "no /proc/" << tool.pid() << "/status";
    EXPECT_EQ(caps["CapEff"], 0u);
    EXPECT_EQ(caps["CapPrm"], 0u);
    EXPECT_EQ(caps["CapInh"], 0u);
    EXPECT_EQ(caps["CapAmb"], 0u);
    EXPECT_EQ(caps["CapBnd"], 0u); // run as root, it may and does empty its bounding set
    EXPECT_EQ(caps["NoNewPrivs"], 1u);
    const auto held = tpkit::live::programs_held_by(tool.pid());
    ASSERT_FALSE(held.empty());

    constexpr std::size_t children = 6, threads = 2;
    auto batch = tpkit::live::run_fork_batch(comm, children, threads);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tpkit::live::forks_of(tool.lines(), batch.forker), children + threads);
    EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    EXPECT_TRUE(tpkit::live::wait_until_programs_unloaded(held, tpkit::live::patient(5s)))
        << "programs left loaded";
}

} // namespace

// run_stream(), the runner of every one-purpose streaming tool.
TEST(LeastPrivilege, ForksnoopDropsEveryCapabilityOnceAttached)
{
    expect_streams_without_capabilities({tpkit::live::tool_path("forksnoop")});
}

TEST(LeastPrivilege, ForksnoopRawDropsEveryCapabilityOnceAttached)
{
    expect_streams_without_capabilities({tpkit::live::tool_path("forksnoop"), "--raw", "--perf-buffer"});
}

TEST(LeastPrivilege, TpsnoopDropsEveryCapabilityOnceAttached)
{
    expect_streams_without_capabilities({tpkit::live::tool_path("tpsnoop"), "sched:sched_process_fork"});
}
