// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Syscalls by name in tpcount's keys: --by syscall names the number of raw_syscalls:* and
// syscalls:* events, --by errno counts failed calls by their error, and a syscall's return
// (--by ret) shows an error as strace does. A workload process of its own comm makes a known
// number of failing and succeeding calls.
#include "live.hpp"
#include "tool_run.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr int missing_opens = 7, directory_writes = 4, good_opens = 3, getppids = 5;

// openat: missing_opens fail (ENOENT), directory_writes fail (EISDIR), good_opens succeed;
// getppid getppids times.
void make_calls()
{
    for (int i = 0; i < missing_opens; i++)
        open("/nonexistent/tpkit-errno", O_RDONLY);
    for (int i = 0; i < directory_writes; i++)
        open("/", O_WRONLY);
    for (int i = 0; i < good_opens; i++)
        close(open("/dev/null", O_RDONLY));
    for (int i = 0; i < getppids; i++)
        syscall(SYS_getppid);
}

// `tpcount ARGS --comm COMM --json` over one run of make_calls() by a process named COMM: the
// final counts by key.
std::map<std::string, std::uint64_t> counts_of(std::vector<std::string> args, const char* comm,
                                               const std::string& key)
{
    args.insert(args.begin(), tpkit::live::tool_path("tpcount"));
    for (const char* more : {"--comm", comm, "--json"})
        args.emplace_back(more);
    ToolRun tool(args);
    constexpr std::size_t links = 1; // at least; its "ready" says all are attached
    EXPECT_TRUE(tool.wait_until_attached(links, tpkit::live::patient(20s))) << tool.stderr_text();
    std::this_thread::sleep_for(200ms); // armed once attached
    pid_t child = tpkit::live::start_child(comm, make_calls);
    EXPECT_EQ(tpkit::live::reap(child), 0);
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    std::map<std::string, std::uint64_t> counts;
    for (const auto& line : tool.lines()) {
        auto obj = tpkit::live::parse_flat_json(line);
        if (obj.count(key) && obj.count("count"))
            counts[obj[key]] += std::stoull(obj["count"]);
    }
    return counts;
}

} // namespace

TEST(TpcountExact, ByErrnoCountsFailedSyscallsByName)
{
    TPKIT_REQUIRE_LIVE();
    auto counts = counts_of({"syscalls:sys_exit_openat", "--by", "errno"}, "tpkit-errno", "errno");
    std::map<std::string, std::uint64_t> expected{{"ENOENT", missing_opens}, {"EISDIR", directory_writes}};
    EXPECT_EQ(counts, expected);
}

TEST(TpcountExact, ByRetShowsErrorsByName)
{
    TPKIT_REQUIRE_LIVE();
    auto counts = counts_of({"syscalls:sys_exit_openat", "--by", "ret"}, "tpkit-ret", "ret");
    EXPECT_EQ(counts["-ENOENT"], std::uint64_t(missing_opens));
    EXPECT_EQ(counts["-EISDIR"], std::uint64_t(directory_writes));
    std::uint64_t descriptors = 0;
    for (const auto& [key, count] : counts)
        if (key != "-ENOENT" && key != "-EISDIR") {
            EXPECT_GE(std::stoi(key), 0) << key;
            descriptors += count;
        }
    EXPECT_EQ(descriptors, std::uint64_t(good_opens));
}

TEST(TpcountExact, BySyscallNamesRawAndPerSyscallEvents)
{
    TPKIT_REQUIRE_LIVE();
    auto raw = counts_of({"raw_syscalls:sys_enter", "--by", "syscall"}, "tpkit-sysname", "syscall");
    EXPECT_EQ(raw["getppid"], std::uint64_t(getppids));
    EXPECT_EQ(raw["openat"], std::uint64_t(missing_opens + directory_writes + good_opens));
    for (const auto& [key, count] : raw)
        EXPECT_FALSE(key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))) << key;

    auto one = counts_of({"syscalls:sys_enter_getppid", "--by", "syscall"}, "tpkit-sysname", "syscall");
    EXPECT_EQ(one, (std::map<std::string, std::uint64_t>{{"getppid", getppids}}));
}

TEST(TpcountExact, FilterScopedToOneEventLeavesTheOthersWhole)
{
    TPKIT_REQUIRE_LIVE();
    // Only the failed opens with ENOENT; every getppid. Both paths: raw_syscalls, and one classic
    // tracepoint per event.
    for (bool classic : {false, true}) {
        std::vector<std::string> args{"syscalls:sys_exit_openat", "syscalls:sys_enter_getppid",
                                      "--by", "syscall", "--filter",
                                      "syscalls:sys_exit_openat=ret == -2"};
        if (classic)
            args.emplace_back("--classic");
        auto counts = counts_of(args, "tpkit-scoped", "syscall");
        EXPECT_EQ(counts, (std::map<std::string, std::uint64_t>{{"openat", missing_opens},
                                                               {"getppid", getppids}}))
            << (classic ? "classic" : "raw_syscalls");
    }
}

TEST(EngineToolErrors, SyscallKeysOnOtherEvents)
{
    TPKIT_REQUIRE_LIVE();
    ToolRun tool({tpkit::live::tool_path("tpcount"), "sched:sched_process_fork", "--by", "errno"});
    EXPECT_EQ(tool.wait(tpkit::live::patient(20s)), 2);
    EXPECT_NE(tool.stderr_text().find("--by errno: sched:sched_process_fork is no syscall exit"),
              std::string::npos)
        << tool.stderr_text();
}
