// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What each tool needs besides root: run as nobody with chosen ambient capabilities, as a
// service account given capabilities would run it. tracefs is usually root's only (mode 0700),
// and every tool but forksnoop --raw reads it (format files, event IDs).
#include "live.hpp"
#include "tool_run.hpp"

#include <tpkit/kernel/tracefs.hpp>

#include <sys/stat.h>
#include <unistd.h>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr const char* setpriv = "/usr/bin/setpriv";

// ARGS (a tool and its arguments) as nobody with the ambient capabilities CAPS
// ("+bpf,+perfmon"; empty: none).
std::vector<std::string> as_nobody(const std::string& caps, const std::vector<std::string>& args)
{
    std::vector<std::string> argv{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"};
    if (!caps.empty()) {
        argv.push_back("--inh-caps=" + caps);
        argv.push_back("--ambient-caps=" + caps);
    }
    argv.push_back(tpkit::live::tool_path(args.at(0)));
    argv.insert(argv.end(), args.begin() + 1, args.end());
    return argv;
}

// Skips unless setpriv exists and tracefs (mounted now, as root, if it was not) is root's only.
#define REQUIRE_ROOT_ONLY_TRACEFS()                                                              \
    do {                                                                                         \
        TPKIT_REQUIRE_LIVE();                                                                    \
        if (access(setpriv, X_OK) != 0)                                                          \
            GTEST_SKIP() << setpriv << " is missing";                                            \
        struct stat st_{};                                                                       \
        if (stat(tpkit::tracefs_root().c_str(), &st_) != 0 || st_.st_uid != 0 ||                 \
            (st_.st_mode & 077) != 0)                                                            \
            GTEST_SKIP() << tpkit::tracefs_root() << " is not root's only here";                 \
    } while (0)

using Commands = std::vector<std::vector<std::string>>;

} // namespace

TEST(ToolAccess, UnreadableTracefsSaysSoExitThree)
{
    REQUIRE_ROOT_ONLY_TRACEFS();
    const std::string reason = ": cannot read " + (tpkit::tracefs_root() / "events").string() +
                               ": Permission denied: tracefs is readable by root only (or with "
                               "CAP_DAC_READ_SEARCH or CAP_DAC_OVERRIDE)\n";
    // With CAP_BPF and CAP_PERFMON too: BPF is allowed, the format files and event IDs are not
    // (this used to say "unknown tracepoint", or blame the capabilities forksnoop had).
    for (const char* caps : {"", "+bpf,+perfmon"}) {
        for (const auto& args : Commands{{"tpsnoop", "sched:sched_process_fork", "-d", "1"},
                                         {"tpcount", "sched:sched_process_fork", "-d", "1"},
                                         {"tphist", "syscalls:sys_enter_read", "count", "-d", "1"},
                                         {"forksnoop", "-d", "1"},
                                         {"netrxlen", "-d", "1"},
                                         {"tplist", "sched:sched_process_fork"},
                                         {"tpgen", "sched:sched_process_fork"}}) {
            ToolRun run(as_nobody(caps, args));
            EXPECT_EQ(run.wait(20s), 3) << args[0] << " " << caps << ": " << run.stderr_text();
            EXPECT_EQ(run.stderr_text(), args[0] + reason) << caps;
            EXPECT_TRUE(run.lines().empty()) << args[0];
        }
    }
}

TEST(ToolAccess, BpfPerfmonAndDacReadSearchAreEnough)
{
    REQUIRE_ROOT_ONLY_TRACEFS();
    for (const auto& args : Commands{{"tpsnoop", "sched:sched_process_fork", "-d", "0.3"},
                                     {"tpsnoop", "--perf-buffer", "sched:sched_process_fork", "-d", "0.3"},
                                     {"tpcount", "sched:sched_process_fork", "-d", "0.3"},
                                     {"tphist", "syscalls:sys_enter_read", "count", "-d", "0.3"},
                                     {"forksnoop", "-d", "0.3"},
                                     {"forksnoop", "--perf-buffer", "-d", "0.3"},
                                     {"netrxlen", "-d", "0.3"}}) {
        ToolRun run(as_nobody("+bpf,+perfmon,+dac_read_search", args));
        EXPECT_EQ(run.wait(20s), 0) << args[0] << " " << args[1] << ": " << run.stderr_text();
        EXPECT_EQ(run.stderr_text(), "") << args[0];
    }
    // Reading formats needs no BPF at all.
    for (const auto& args : Commands{{"tplist", "sched:sched_process_fork"},
                                     {"tpgen", "sched:sched_process_fork"}}) {
        ToolRun run(as_nobody("+dac_read_search", args));
        EXPECT_EQ(run.wait(20s), 0) << args[0] << ": " << run.stderr_text();
        EXPECT_FALSE(run.lines().empty()) << args[0];
    }
}

TEST(ToolAccess, RawForksnoopNeedsOnlyBpfAndPerfmon)
{
    REQUIRE_ROOT_ONLY_TRACEFS();
    // A raw tracepoint is attached by name through bpf(): no tracefs involved.
    ToolRun run(as_nobody("+bpf,+perfmon", {"forksnoop", "--raw", "-d", "0.3"}));
    EXPECT_EQ(run.wait(20s), 0) << run.stderr_text();
    EXPECT_EQ(run.stderr_text(), "");
    // Without CAP_BPF the kernel refuses the load, and the error says what is missing.
    ToolRun bare(as_nobody("", {"forksnoop", "--raw", "-d", "0.3"}));
    EXPECT_EQ(bare.wait(20s), 3) << bare.stderr_text();
    EXPECT_EQ(bare.stderr_text(), "forksnoop: cannot load BPF programs of forksnoop: Operation not "
                                  "permitted (needs root, or CAP_BPF and CAP_PERFMON)\n");
}
