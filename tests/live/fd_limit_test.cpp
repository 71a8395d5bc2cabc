// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Open-file limits: the tools count what their BPF objects will hold (maps, programs, BTF, a
// perf event and a link per attach), raise the soft limit to it, and refuse at once, before
// loading anything, when the hard limit is lower.
#include "live.hpp"
#include "tool_run.hpp"

#include <tpkit/engine/engine.hpp>

#include <unistd.h>

#include <regex>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr const char* prlimit_path = "/usr/bin/prlimit";

// A glob of a few events: all the syscalls events would take long to detach, a grace period
// each (bench/BENCHMARKS.md, "Figures the comments point to").
const std::string few_events = "syscalls:sys_enter_*read*";

struct Command {
    std::vector<std::string> args; // tool, arguments
    std::size_t events;
};

std::vector<Command> commands()
{
    std::size_t n = tpkit::list_events(tpkit::live_events_root(), few_events).size();
    // --classic: an engine instance per event, the files growing with the glob (on
    // raw_syscalls, one instance serves them all).
    return {{{"tpsnoop", "--classic", few_events}, n},
            {{"tpsnoop", "--classic", "--perf-buffer", few_events}, n},
            {{"tpcount", "--classic", few_events}, n},
            {{"tphist", "syscalls:sys_enter_read", "count"}, 1}};
}

std::vector<std::string> with_nofile(const std::string& limits, const std::vector<std::string>& args,
                                     std::initializer_list<std::string> extra = {})
{
    std::vector<std::string> argv{prlimit_path, "--nofile=" + limits, tpkit::live::tool_path(args.at(0))};
    argv.insert(argv.end(), args.begin() + 1, args.end());
    argv.insert(argv.end(), extra);
    return argv;
}

std::string label(const Command& c)
{
    std::string text;
    for (const auto& a : c.args)
        text += (text.empty() ? "" : " ") + a;
    return text;
}

} // namespace

TEST(FdLimit, HardLimitTooLowFailsAtOnceNamingTheFigures)
{
    TPKIT_REQUIRE_LIVE();
    if (access(prlimit_path, X_OK) != 0)
        GTEST_SKIP() << prlimit_path << " is missing";
    const std::string too_low = "24"; // open files: fewer than any command needs
    for (const Command& c : commands()) {
        auto start = std::chrono::steady_clock::now();
        ToolRun run(with_nofile(too_low + ":" + too_low, c.args));
        EXPECT_EQ(run.wait(20s), 1) << label(c) << ": " << run.stderr_text();
        // Before loading: no load or attach has to fail first (the whole glob used to be
        // attached before EMFILE).
        EXPECT_LT(std::chrono::steady_clock::now() - start, 3s) << label(c);
        std::string events = c.events == 1 ? "1 event needs" : std::to_string(c.events) + " events need";
        std::regex line(c.args[0] + ": " + events + " about [0-9]+ open files; the hard limit is " +
                        too_low + " \\(ulimit -Hn\\)\n");
        EXPECT_TRUE(std::regex_match(run.stderr_text(), line)) << run.stderr_text();
    }
}

TEST(FdLimit, LowSoftLimitIsRaisedToTheCountedFigure)
{
    TPKIT_REQUIRE_LIVE();
    if (access(prlimit_path, X_OK) != 0)
        GTEST_SKIP() << prlimit_path << " is missing";
    const std::string too_low = "16"; // open files: fewer than any command needs
    for (const Command& c : commands()) {
        // The figure the tool names for a hard limit too low...
        ToolRun refused(with_nofile(too_low + ":" + too_low, c.args));
        ASSERT_EQ(refused.wait(20s), 1) << label(c) << ": " << refused.stderr_text();
        std::smatch m;
        const std::string err = refused.stderr_text();
        ASSERT_TRUE(std::regex_search(err, m, std::regex("about ([0-9]+) open files"))) << err;
        // ...is enough: with exactly that hard limit and the soft limit too low it loads, attaches
        // every event and runs. Its events are of a command that does not run: every read of a
        // loaded machine through one perf buffer is more than its reader keeps up with
        // (bench/BENCHMARKS.md, "Figures the comments point to"), and a loss report is not what
        // this checks.
        ToolRun run(
            with_nofile(too_low + ":" + m[1].str(), c.args, {"-d", "0.3", "--comm", "tpkit-nosuch"}));
        EXPECT_EQ(run.wait(20s), 0) << label(c) << " (hard limit " << m[1] << "): "
                                    << run.stderr_text();
        EXPECT_EQ(run.stderr_text(), "") << label(c);
    }
}
