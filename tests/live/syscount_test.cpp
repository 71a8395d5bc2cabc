// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// syscount against a process that makes a known set of syscalls: exactly those, counted exactly,
// by syscall and by process, failed ones by errno, with their time, across interval drains.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr const char* maker_comm = "tpk-syscalls";

// How many calls of each kind the maker makes once released.
struct Calls {
    int getppid = 0;
    int bad_close = 0;   // close(-1): EBADF
    int missing_open = 0; // openat of a path that does not exist: ENOENT
};

// The calls of most tests; and of those that need the calls to outlast many intervals.
constexpr int maker_getppids = 1000, maker_bad_closes = 30, maker_missing_opens = 20;
constexpr Calls usual_calls{maker_getppids, maker_bad_closes, maker_missing_opens};
constexpr int usual_calls_made = maker_getppids + maker_bad_closes + maker_missing_opens;
constexpr int many_getppids = 300000;
constexpr Calls many_calls{many_getppids, 0, 0};
// The maker's exit: exit_group once, counted at entry (it never returns).
constexpr int maker_exit_groups = 1;

// A process named maker_comm that, once released, makes exactly `calls` with raw syscalls (no
// C library caching or extra calls) and exits (exit_group). Released only once it sleeps in its
// read() of the go pipe: from then on it makes no syscall before released, and that read() was
// entered before any tool attached.
class SyscallMaker {
public:
    explicit SyscallMaker(Calls calls) : child_(maker_comm, {}, [calls] { return act(calls); })
    {
        const std::string path = "/proc/" + pid_text() + "/syscall";
        const auto end = std::chrono::steady_clock::now() + tpkit::live::patient(30s);
        for (; std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(1ms)) {
            std::ifstream in(path);
            std::string number;
            if (in >> number && number == std::to_string(SYS_read))
                return;
        }
        throw std::runtime_error("syscall maker never waited in read()");
    }

    pid_t pid() const { return child_.pid(); }
    std::string pid_text() const { return std::to_string(child_.pid()); }

    // Releases it and waits until it has exited.
    void make_calls()
    {
        if (int status = child_.go_and_wait())
            throw std::runtime_error("syscall maker failed: " + std::to_string(status));
    }

private:
    static int act(const Calls& calls)
    {
        for (int i = 0; i < calls.getppid; i++)
            syscall(SYS_getppid);
        for (int i = 0; i < calls.bad_close; i++)
            syscall(SYS_close, -1);
        for (int i = 0; i < calls.missing_open; i++)
            syscall(SYS_openat, AT_FDCWD, "/nonexistent/tpkit-syscount", O_RDONLY);
        return 0;
    }

    tpkit::live::ScriptedChild child_;
};

// The syscalls the maker's C runtime makes as it exits, after its own calls: none, but under
// AddressSanitizer one sigaltstack() (its thread-exit hook takes down the alternate signal
// stack it set up), which returns successfully.
#ifdef __SANITIZE_ADDRESS__
constexpr int runtime_sigaltstacks = 1;
#else
constexpr int runtime_sigaltstacks = 0;
#endif

// syscount's BPF links: sys_enter; with -L sys_exit too.
constexpr std::size_t syscount_links = 1, syscount_latency_links = 2;

// The JSON rows of a syscount run, each row's values by column.
using Rows = std::vector<std::map<std::string, std::string>>;

// Runs syscount --json with `args` on a maker of `calls`: attached (programs holding `links`),
// the calls made, then SIGINT for the final table.
Rows syscount_rows(const Calls& calls, std::vector<std::string> args,
                   std::size_t links = syscount_links)
{
    SyscallMaker maker(calls);
    std::vector<std::string> argv{tpkit::live::tool_path("syscount"), "--json", "-T", "100"};
    for (auto& a : args)
        argv.push_back(a == "{pid}" ? maker.pid_text() : a);
    ToolRun tool(argv);
    if (!tool.wait_until_attached(links, 60s)) {
        ADD_FAILURE() << "syscount did not attach: " << tool.stderr_text();
        return {};
    }
    maker.make_calls();
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.stderr_text(), "");
    Rows rows;
    for (const auto& line : tool.lines())
        rows.push_back(tpkit::live::parse_flat_json(line));
    return rows;
}

// Counts by syscall name, summed over every table.
std::map<std::string, std::uint64_t> counts_by_syscall(const Rows& rows)
{
    std::map<std::string, std::uint64_t> counts;
    for (const auto& row : rows) {
        EXPECT_TRUE(row.count("syscall") && row.count("count")) << "a row without syscall, count";
        if (row.count("syscall"))
            counts[row.at("syscall")] += std::stoull(row.at("count"));
    }
    return counts;
}

using Counts = std::map<std::string, std::uint64_t>;

// COUNTS and what the runtime adds at exit (successful calls, counted in every mode but -x/-e).
Counts with_runtime_exit(Counts counts)
{
    if (runtime_sigaltstacks)
        counts["sigaltstack"] += runtime_sigaltstacks;
    return counts;
}

} // namespace

TEST(SyscountExact, EverySyscallOfThePidOnce)
{
    TPKIT_REQUIRE_LIVE();
    // Counted at entry: exit_group too, which never returns.
    auto rows = syscount_rows(usual_calls, {"-p", "{pid}"});
    EXPECT_EQ(counts_by_syscall(rows),
              with_runtime_exit({{"getppid", maker_getppids},
                                 {"close", maker_bad_closes},
                                 {"openat", maker_missing_opens},
                                 {"exit_group", maker_exit_groups}}));
}

TEST(SyscountExact, FailedOnly)
{
    TPKIT_REQUIRE_LIVE();
    auto rows = syscount_rows(usual_calls, {"-p", "{pid}", "-x"});
    EXPECT_EQ(counts_by_syscall(rows),
              (Counts{{"close", maker_bad_closes}, {"openat", maker_missing_opens}}));
}

TEST(SyscountExact, OneErrnoByNameOrNumber)
{
    TPKIT_REQUIRE_LIVE();
    EXPECT_EQ(counts_by_syscall(syscount_rows(usual_calls, {"-p", "{pid}", "-e", "EBADF"})),
              (Counts{{"close", maker_bad_closes}}));
    const std::string enoent = std::to_string(ENOENT);
    EXPECT_EQ(counts_by_syscall(syscount_rows(usual_calls, {"-p", "{pid}", "-e", enoent})),
              (Counts{{"openat", maker_missing_opens}}));
}

TEST(SyscountExact, OneSyscall)
{
    TPKIT_REQUIRE_LIVE();
    auto rows = syscount_rows(usual_calls, {"-p", "{pid}", "--syscall", "getppid"});
    EXPECT_EQ(counts_by_syscall(rows), (Counts{{"getppid", maker_getppids}}));
}

TEST(SyscountExact, ByProcess)
{
    TPKIT_REQUIRE_LIVE();
    auto rows = syscount_rows(usual_calls, {"-p", "{pid}", "-P"});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["comm"], maker_comm);
    EXPECT_EQ(rows[0]["count"],
              std::to_string(usual_calls_made + maker_exit_groups + runtime_sigaltstacks));
    EXPECT_FALSE(rows[0]["pid"].empty());
    EXPECT_EQ(rows[0].count("syscall"), 0u);
}

TEST(SyscountExact, FailedByProcess)
{
    TPKIT_REQUIRE_LIVE();
    auto rows = syscount_rows(usual_calls, {"-p", "{pid}", "-P", "-e", "ENOENT"});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["comm"], maker_comm);
    EXPECT_EQ(rows[0]["count"], std::to_string(maker_missing_opens));
}

TEST(SyscountExact, LatencyCountsEveryReturnWithItsTime)
{
    TPKIT_REQUIRE_LIVE();
    // Counted at return, with the time since entry: the read() the maker waited in began before
    // the tool attached (no start: left out), exit_group never returns.
    auto rows = syscount_rows(usual_calls, {"-p", "{pid}", "-L"}, syscount_latency_links);
    EXPECT_EQ(counts_by_syscall(rows), with_runtime_exit({{"getppid", maker_getppids},
                                                          {"close", maker_bad_closes},
                                                          {"openat", maker_missing_opens}}));
    for (const auto& row : rows) {
        double total = std::stod(row.at("time_us")), avg = std::stod(row.at("avg_us"));
        double count = std::stod(row.at("count"));
        EXPECT_GT(total, 0) << row.at("syscall");
        // Both rounded to the nanosecond.
        EXPECT_NEAR(avg, total / count, 0.001) << row.at("syscall");
    }
}

TEST(SyscountExact, LatencyByProcessInMilliseconds)
{
    TPKIT_REQUIRE_LIVE();
    auto rows =
        syscount_rows(usual_calls, {"-p", "{pid}", "-L", "-P", "-m"}, syscount_latency_links);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["comm"], maker_comm);
    EXPECT_EQ(rows[0]["count"], std::to_string(usual_calls_made + runtime_sigaltstacks));
    EXPECT_TRUE(rows[0].count("time_ms") && rows[0].count("avg_ms"));
}

TEST(SyscountExact, NoCountLostBetweenIntervals)
{
    TPKIT_REQUIRE_LIVE();
    // Tables every 10 ms while the maker makes its calls: the counting map is drained many
    // times under way, and the tables add up to exactly the calls made.
    auto rows = syscount_rows(many_calls, {"-p", "{pid}", "--syscall", "getppid", "0.01"});
    EXPECT_EQ(counts_by_syscall(rows), (Counts{{"getppid", many_getppids}}));
    EXPECT_GT(rows.size(), 1u) << "the calls ended within one interval: nothing was drained under way";
}

TEST(SyscountExact, NoCountLostBetweenIntervalsByProcess)
{
    TPKIT_REQUIRE_LIVE();
    // By process the map is a hash drained every interval (two halves swapped): the same sum.
    auto rows = syscount_rows(many_calls, {"-p", "{pid}", "-P", "--syscall", "getppid", "0.01"});
    std::uint64_t total = 0;
    for (const auto& row : rows) {
        EXPECT_EQ(row.at("comm"), maker_comm);
        total += std::stoull(row.at("count"));
    }
    EXPECT_EQ(total, std::uint64_t(many_getppids));
    EXPECT_GT(rows.size(), 1u) << "the calls ended within one interval: nothing was drained under way";
}

TEST(Syscount, UnknownErrnoOrSyscallIsUsageError)
{
    for (std::vector<std::string> args : {std::vector<std::string>{"-e", "EFOO"},
                                          {"-e", "0"},
                                          {"--syscall", "no_such_syscall"},
                                          {"--syscall", "5000"}}) {
        std::vector<std::string> argv{tpkit::live::tool_path("syscount")};
        argv.insert(argv.end(), args.begin(), args.end());
        ToolRun run(argv);
        EXPECT_EQ(run.wait(10s), 2) << args[1];
        EXPECT_EQ(std::count(run.stderr_text().begin(), run.stderr_text().end(), '\n'), 1)
            << run.stderr_text();
        EXPECT_EQ(run.stderr_text().rfind("syscount: ", 0), 0u) << run.stderr_text();
        EXPECT_TRUE(run.lines().empty());
    }
}

TEST(Syscount, ListsTheBuildsSyscalls)
{
    ToolRun run({tpkit::live::tool_path("syscount"), "-l"});
    ASSERT_EQ(run.wait(10s), 0) << run.stderr_text();
    const auto& lines = run.lines();
    EXPECT_NE(std::find(lines.begin(), lines.end(), "  0: read"), lines.end());
    EXPECT_NE(std::find(lines.begin(), lines.end(), std::to_string(SYS_getppid) + ": getppid"),
              lines.end());
    EXPECT_NE(std::find(lines.begin(), lines.end(), " " + std::to_string(SYS_execve) + ": execve"),
              lines.end());
}
