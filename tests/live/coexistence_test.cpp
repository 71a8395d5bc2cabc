// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Two instances of a tool on the same tracepoint at once: each has its own programs and
// buffers, so each sees every event of a known workload, exactly.
#include "fork_events.hpp"
#include "live.hpp"
#include "tool_run.hpp"

#include <signal.h>

#include <array>
#include <memory>

using tpkit::live::ToolRun;

namespace {

constexpr const char* marker_comm = "tpk-comarker";
constexpr const char* batch_comm = "tpk-coexist";
constexpr int children = 12;
constexpr int threads = 4;

using Pair = std::array<std::unique_ptr<ToolRun>, 2>;

Pair start(const std::vector<std::string>& first, const std::vector<std::string>& second)
{
    return {std::make_unique<ToolRun>(first), std::make_unique<ToolRun>(second)};
}

// Marker forks until both show one (`shows` a marker line): both are attached and reading.
void wait_until_both_live(Pair& tools, const std::function<bool(const std::string&, pid_t)>& shows)
{
    std::array<bool, 2> live{};
    for (int attempt = 0; attempt < tpkit::live::poke_attempts && !(live[0] && live[1]); attempt++) {
        const pid_t forker = tpkit::live::run_marker_fork(marker_comm).forker;
        for (int i = 0; i < 2; i++)
            live[i] = live[i] || tools[i]->wait_for_line(
                                     [&](const std::string& l) { return shows(l, forker); },
                                     tpkit::live::poke_wait);
    }
    for (int i = 0; i < 2; i++)
        ASSERT_TRUE(live[i]) << "instance " << i << " never showed a marker fork; stderr: "
                             << tools[i]->stderr_text();
}

void expect_both_see_every_fork(const std::string& tool, const std::vector<std::string>& args)
{
    TPKIT_REQUIRE_LIVE();
    std::vector<std::string> argv{tpkit::live::tool_path(tool), "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto perf = argv;
    perf.push_back("--perf-buffer");
    Pair tools = start(argv, perf);
    ASSERT_NO_FATAL_FAILURE(wait_until_both_live(tools, [](const std::string& line, pid_t forker) {
        return tpkit::live::fork_parent(line) == std::to_string(forker);
    }));

    const auto batch = tpkit::live::run_fork_batch(batch_comm, children, threads);
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(tools[i]->stop(SIGINT), 0) << tools[i]->stderr_text();
        EXPECT_EQ(tpkit::live::forks_of(tools[i]->lines(), batch.forker), std::size_t(children + threads))
            << tool << " instance " << i;
        EXPECT_EQ(tools[i]->lines().back(), "{\"type\":\"lost\",\"lost_events\":0}") << tool << " instance " << i;
    }
}

// tpcount's counts of sched_process_fork by comm, summed over its intervals.
std::uint64_t forks_counted(const std::vector<std::string>& lines, const std::string& comm)
{
    std::uint64_t total = 0;
    for (const auto& line : lines) {
        auto obj = tpkit::live::parse_flat_json(line);
        if (obj["comm"] == comm && obj["event"] == "sched:sched_process_fork")
            total += std::stoull(obj["count"]);
    }
    return total;
}

} // namespace

TEST(Coexistence, TwoForksnoopsSeeEveryFork)
{
    expect_both_see_every_fork("forksnoop", {});
}

TEST(Coexistence, TwoTpsnoopsSeeEveryFork)
{
    expect_both_see_every_fork("tpsnoop", {"sched:sched_process_fork"});
}

TEST(Coexistence, TwoTpcountsCountEveryFork)
{
    TPKIT_REQUIRE_LIVE();
    const std::vector<std::string> argv{tpkit::live::tool_path("tpcount"), "sched:sched_process_fork",
                                        "--by", "comm", "--json", "0.1"};
    Pair tools = start(argv, argv);
    ASSERT_NO_FATAL_FAILURE(wait_until_both_live(tools, [](const std::string& line, pid_t) {
        return tpkit::live::parse_flat_json(line)["comm"] == marker_comm;
    }));

    tpkit::live::run_fork_batch(batch_comm, children, threads);
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(tools[i]->stop(SIGINT), 0) << tools[i]->stderr_text();
        EXPECT_EQ(forks_counted(tools[i]->lines(), batch_comm), std::uint64_t(children + threads))
            << "tpcount instance " << i;
    }
}
