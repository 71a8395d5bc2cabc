// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Bad input and missing privileges: one line on stderr, the documented exit code, and no BPF
// program of ours left loaded after any way a tool can end.
#include "live.hpp"
#include "tool_run.hpp"

#include <tpkit/engine/engine.hpp>

#include <bpf/libbpf.h>

#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

struct Expected {
    std::vector<std::string> args;
    int exit_code;
    std::string message;
};

void expect_one_line_error(const std::string& tool_name, const Expected& e,
                           std::optional<std::string> as_user = {})
{
    std::vector<std::string> argv{tpkit::live::tool_path(tool_name)};
    argv.insert(argv.end(), e.args.begin(), e.args.end());
    ToolRun tool(argv, as_user);
    int status = tool.wait(20s);
    EXPECT_EQ(status, e.exit_code) << tool.stderr_text();
    const std::string& err = tool.stderr_text();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(err, e.message + "\n");
    EXPECT_TRUE(tool.lines().empty()) << tool.lines().front();
}

} // namespace

TEST(ToolErrors, UsageErrorsExitTwo)
{
    // Argument checks come before any BPF work, so these run anywhere.
    expect_one_line_error("netrxlen", {{"0"}, 2,
        "netrxlen: interval: '0' is not a positive number (see --help)"});
    expect_one_line_error("netrxlen", {{"soon"}, 2,
        "netrxlen: interval: 'soon' is not a positive number (see --help)"});
    expect_one_line_error("netrxlen", {{"1", "-3"}, 2,
        "netrxlen: count: '-3' is not a positive whole number (see --help)"});
    expect_one_line_error("forksnoop", {{"-d", "nan"}, 2,
        "forksnoop: --duration: 'nan' is not a positive number (see --help)"});
    expect_one_line_error("forksnoop", {{"--bogus"}, 2,
        "forksnoop: The following argument was not expected: --bogus (see --help)"});
    expect_one_line_error("forksnoop", {{"--comm", "a-name-longer-than-15"}, 2,
        "forksnoop: --comm: must have 1 to 15 characters (see --help)"});
    expect_one_line_error("tphist", {{"syscalls:sys_enter_read", "count", "--loglinear", "0"}, 2,
        "tphist: --loglinear: Value 0 not in range 1 to 4 (see --help)"});
    expect_one_line_error("tphist", {{"syscalls:sys_enter_read", "count", "--loglinear", "5"}, 2,
        "tphist: --loglinear: Value 5 not in range 1 to 4 (see --help)"});
    for (const std::string tool : {"softirqs", "hardirqs"})
        expect_one_line_error(tool, {{"--count", "-d"}, 2,
            tool + ": --count counts events: it cannot be used with -d or -N"});
    // Their events come from the network stack, often in softirqs that interrupt whatever task
    // runs, the tool's own too: none is left out, so there is nothing to include.
    for (const std::string tool : {"tcpretrans", "tcpdrop", "tcpstates", "tcplife", "nettxlen"})
        expect_one_line_error(tool, {{"--include-self"}, 2,
            tool + ": The following argument was not expected: --include-self (see --help)"});
}

TEST(ToolErrors, UnknownEventAndDeviceExitFour)
{
    expect_one_line_error("netrxlen", {{"--event", "netif_bogus"}, 4,
        "netrxlen: unknown event 'netif_bogus': netrxlen counts at netif_receive_skb or netif_rx"});
    expect_one_line_error("netrxlen", {{"--dev", "tpk-no-such0"}, 4,
        "netrxlen: unknown device 'tpk-no-such0'"});
    expect_one_line_error("nettxlen", {{"--dev", "tpk-no-such0"}, 4,
        "nettxlen: unknown device 'tpk-no-such0'"});
    for (const std::string tool : {"softirqs", "hardirqs"})
        expect_one_line_error(tool, {{"--cpu", "4096"}, 4,
            tool + ": unknown CPU 4096: this machine has CPUs 0 to " +
                std::to_string(libbpf_num_possible_cpus() - 1)});
}

TEST(ToolErrors, WithoutPrivilegesExitThree)
{
    TPKIT_REQUIRE_LIVE(); // needs root to drop to nobody
    // tracefs may or may not be mounted already: both paths must end in exit 3, one line.
    for (const char* tool : {"forksnoop", "netrxlen"}) {
        std::vector<std::string> argv{tpkit::live::tool_path(tool), "-d", "1"};
        ToolRun run(argv, "nobody");
        EXPECT_EQ(run.wait(20s), 3) << tool << ": " << run.stderr_text();
        const std::string& err = run.stderr_text();
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_EQ(err.rfind(std::string(tool) + ": ", 0), 0u) << err;
    }
}

TEST(ToolErrors, FtraceEventsRefusedBeforeLoadingExitFour)
{
    TPKIT_REQUIRE_LIVE();
    const auto events = tpkit::live_events_root();
    if (!std::filesystem::exists(events / "ftrace" / "print"))
        GTEST_SKIP() << "no ftrace:print event here";
    // perf_event_open or the attach fails on them (EINVAL, or EPERM for ftrace:function even
    // as root), so they are refused by name before anything is loaded.
    const std::string why = ": the kernel does not attach BPF programs to ftrace:* events";
    auto start = std::chrono::steady_clock::now();
    expect_one_line_error("tpsnoop", {{"ftrace:print"}, 4, "tpsnoop: ftrace:print" + why});
    expect_one_line_error("tpcount", {{"ftrace:print"}, 4, "tpcount: ftrace:print" + why});
    expect_one_line_error("tphist", {{"ftrace:print", "ip"}, 4, "tphist: ftrace:print" + why});
    if (std::filesystem::exists(events / "ftrace" / "function"))
        expect_one_line_error("tpsnoop", {{"ftrace:function"}, 4,
                                          "tpsnoop: ftrace:function" + why});
    // A glob left with nothing once they are out is an unknown event, at once (it used to spend
    // seconds attaching nothing: bench/BENCHMARKS.md, "Figures the comments point to").
    expect_one_line_error("tpsnoop", {{"ftrace:*"}, 4,
        "tpsnoop: 'ftrace:*' matches only ftrace:* events: the kernel does not attach BPF "
        "programs to them"});
    expect_one_line_error("tpcount", {{"sched:sched_process_fork", "ftrace:p*"}, 4,
        "tpcount: 'ftrace:p*' matches only ftrace:* events: the kernel does not attach BPF "
        "programs to them"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(ToolErrors, GlobsSkipFtraceEventsSayingSo)
{
    TPKIT_REQUIRE_LIVE();
    const std::string glob = "*:*print*";
    auto matched = tpkit::list_events(tpkit::live_events_root(), glob);
    auto ftrace = std::count_if(matched.begin(), matched.end(),
                                [](const auto& name) { return name.system == "ftrace"; });
    if (ftrace == 0 || ftrace == static_cast<std::ptrdiff_t>(matched.size()))
        GTEST_SKIP() << glob << " does not match both ftrace:* and other events here";
    std::string note = fmt::format(": skipping {} ftrace:* event{}: the kernel does not attach "
                                   "BPF programs to them\n", ftrace, ftrace == 1 ? "" : "s");
    for (const std::string tool : {"tpsnoop", "tpcount"}) {
        ToolRun run({tpkit::live::tool_path(tool), glob, "-d", "0.3"});
        EXPECT_EQ(run.wait(20s), 0) << tool << ": " << run.stderr_text();
        EXPECT_EQ(run.stderr_text(), tool + note);
    }
}

TEST(ToolCleanup, NothingStaysLoadedAfterSigintSigtermOrDuration)
{
    TPKIT_REQUIRE_LIVE();
    struct Case {
        std::vector<std::string> argv;
        int signal; // 0: let --duration expire
    };
    std::vector<Case> cases{
        {{tpkit::live::tool_path("forksnoop")}, SIGINT},
        {{tpkit::live::tool_path("forksnoop"), "--raw"}, SIGTERM},
        {{tpkit::live::tool_path("forksnoop"), "--perf-buffer", "-d", "0.5"}, 0},
        {{tpkit::live::tool_path("netrxlen")}, SIGINT},
        {{tpkit::live::tool_path("netrxlen"), "--per-dev", "0.1"}, SIGTERM},
        {{tpkit::live::tool_path("netrxlen"), "-d", "0.5"}, 0},
    };
    for (const auto& c : cases) {
        const auto before = tpkit::live::loaded_program_ids();
        ToolRun tool(c.argv);
        constexpr std::size_t links = 1; // forksnoop's sched_process_fork, netrxlen's event
        EXPECT_TRUE(tool.wait_until_attached(links, 2s)) << c.argv.back();
        int status = c.signal ? tool.stop(c.signal) : tool.wait(10s);
        EXPECT_EQ(status, 0) << c.argv.back() << ": " << tool.stderr_text();
        tpkit::live::expect_none_left_behind(before, c.argv.back());
    }
}
