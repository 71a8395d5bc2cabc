// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tplat against intervals the test makes itself: nanosleeps of a known length
// from this thread land in the one bucket of each unit that holds that length,
// exactly as many as were made; requests to a loop device of the test's own,
// matched by sector from issue to completion, are counted exactly; and starts
// that find the map of pending starts full are counted exactly.
#include "live.hpp"
#include "loop_device.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::DirectIo;
using tpkit::live::LoopDevice;
using tpkit::live::ToolRun;

namespace
{

std::string own_tid()
{
    return std::to_string(syscall(SYS_gettid));
}

// What tplat measured of one sleep, from entry to exit of the system call, lies between the
// length asked for (the timer is armed after the entry, and never fires early) and what this
// thread measured around the call (the entry comes after the first reading, the exit before the
// second). How late a sleep ends is up to the machine: on a loaded one, sleeps were seen to end
// in the next log2 bucket (bench/BENCHMARKS.md, "Figures the comments point to"). So the test
// asks the tool for exactly the buckets these bounds allow, not for a lateness it cannot
// promise.
struct Slept {
    std::uint64_t at_least_ns;
    std::uint64_t at_most_ns;
};

std::uint64_t monotonic_ns()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return std::uint64_t(now.tv_sec) * 1'000'000'000 + std::uint64_t(now.tv_nsec);
}

// nanosleep() itself, not clock_nanosleep() as glibc's wrapper calls.
std::vector<Slept> sleep_ns(long ns, int times)
{
    const timespec length{ns / 1000000000, ns % 1000000000};
    std::vector<Slept> slept;
    for (int i = 0; i < times; i++) {
        const std::uint64_t before = monotonic_ns();
        EXPECT_EQ(syscall(SYS_nanosleep, &length, nullptr), 0);
        slept.push_back({std::uint64_t(ns), monotonic_ns() - before});
    }
    return slept;
}

// Fails unless `buckets` (low -> count) is a way the sleeps can fall into buckets: each in one
// bucket between bucket_of(at least) and bucket_of(at most), all of them counted.
void expect_buckets_hold(const std::map<std::uint64_t, std::uint64_t>& buckets,
                         const std::vector<Slept>& slept,
                         const std::function<std::uint64_t(std::uint64_t ns)>& bucket_of,
                         const std::string& what)
{
    std::uint64_t counted = 0;
    for (const auto& [low, count] : buckets) {
        std::uint64_t surely = 0, maybe = 0; // sleeps that must be here, that may be here
        for (const Slept& s : slept) {
            const std::uint64_t first = bucket_of(s.at_least_ns), last = bucket_of(s.at_most_ns);
            surely += first == low && last == low;
            maybe += first <= low && low <= last;
        }
        EXPECT_GE(count, surely) << what << ": bucket " << low;
        EXPECT_LE(count, maybe) << what << ": bucket " << low;
        counted += count;
    }
    EXPECT_EQ(counted, slept.size()) << what;
    for (const Slept& s : slept) { // a bucket that must hold a sleep is there
        if (bucket_of(s.at_least_ns) == bucket_of(s.at_most_ns)) {
            EXPECT_TRUE(buckets.count(bucket_of(s.at_least_ns))) << what;
        }
    }
}

// The low end of the log2 bucket that holds `value`: 2^floor(log2 value), 0 for 0 and 1 for 1.
std::uint64_t log2_bucket(std::uint64_t value)
{
    return value == 0 ? 0 : std::uint64_t(1) << (63 - __builtin_clzll(value));
}

// The device number as the block tracepoints' dev field holds it (the kernel's MKDEV).
std::uint64_t kernel_dev(const std::string& path)
{
    struct stat st{};
    if (stat(path.c_str(), &st) != 0)
        throw std::runtime_error("cannot stat " + path);
    return (std::uint64_t{major(st.st_rdev)} << 20) | minor(st.st_rdev);
}

// tplat with --json and ARGS, once both events are attached and counted.
std::unique_ptr<ToolRun> start_tplat(std::vector<std::string> args)
{
    constexpr std::size_t links = 2; // the start event's, the end event's
    auto tool = tpkit::live::start_attached("tplat", std::move(args), links);
    std::this_thread::sleep_for(100ms); // counting starts just after the second attach
    return tool;
}

} // namespace

TEST(TplatExact, NanosleepsOfOneThreadLandInTheirBucketOfEachUnit)
{
    TPKIT_REQUIRE_LIVE();
    // 40 ms: [2^25, 2^26 - 1] ns, [2^15, 2^16 - 1] us, [32, 63] ms unless a sleep ends late.
    constexpr long length_ns = 40'000'000;
    constexpr int sleeps = 20;
    const std::map<std::string, std::uint64_t> ns_per_unit{{"ns", 1}, {"us", 1000}, {"ms", 1000000}};
    for (const auto& [unit, ns_per] : ns_per_unit) {
        auto tool = start_tplat({"syscalls:sys_enter_nanosleep", "syscalls:sys_exit_nanosleep",
                                 "-t", own_tid(), "--unit", unit});
        const auto slept = sleep_ns(length_ns, sleeps);
        ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
        // The tool truncates to its unit, then takes the log2 bucket.
        expect_buckets_hold(tpkit::live::histogram_buckets(tool->lines()), slept,
                            [ns_per = ns_per](std::uint64_t ns) { return log2_bucket(ns / ns_per); }, unit);
        EXPECT_EQ(tool->stderr_text(), "");
    }
}

// Host-only for now: on Linux 6.1 (the kernels test) tplat --linear --by tid is refused at load
// (EINVAL) and the pending-map overflow counts the replaced start among the full-map ones.
TEST(TplatLive, LinearBucketsAndKeysOfTheStart)
{
    TPKIT_REQUIRE_LIVE();
    // Each sleep is as long as its bucket's lower bound ([40, 79] and [80, 119] ms) and may end
    // late; the buckets must be those each sleep's bounds allow.
    auto tool = start_tplat({"syscalls:sys_enter_nanosleep", "syscalls:sys_exit_nanosleep", "-t",
                             own_tid(), "--unit", "ms", "--linear", "0,160,40", "--by", "tid"});
    constexpr int short_sleeps = 5, long_sleeps = 3;
    auto slept = sleep_ns(40'000'000, short_sleeps);
    const auto longer = sleep_ns(80'000'000, long_sleeps);
    slept.insert(slept.end(), longer.begin(), longer.end());
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    // Linear buckets 40 ms wide from 0 to 160 ms; past 160 ms, one last bucket.
    expect_buckets_hold(tpkit::live::histogram_buckets(tool->lines(), own_tid()), slept,
                        [](std::uint64_t ns) { return std::min<std::uint64_t>(ns / 1000000 / 40 * 40, 160); },
                        "linear ms");
    EXPECT_EQ(tpkit::live::histogram_totals(tool->lines()),
              (std::map<std::string, std::uint64_t>{{own_tid(), short_sleeps + long_sleeps}}));
}

TEST(TplatExact, RequestsMatchedBySectorFromIssueToCompletion)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk, other;
    const std::string on_disk = "dev == " + std::to_string(kernel_dev(disk.path()));
    auto tool = start_tplat({"block:block_rq_issue", "block:block_rq_complete", "--match",
                             "block_rq_complete.sector == block_rq_issue.sector", "--start-filter",
                             on_disk, "--end-filter", on_disk, "--unit", "ns"});
    constexpr int disk_reads = 7, disk_writes = 3;
    std::vector<DirectIo> reads, writes;
    for (int i = 0; i < disk_reads; i++)
        reads.push_back({8192u * i, 4096});
    for (int i = 0; i < disk_writes; i++)
        writes.push_back({(1u << 20) + 8192u * i, 4096});
    tpkit::live::read_direct(disk.path(), reads);
    tpkit::live::read_direct(other.path(), reads);
    tpkit::live::write_direct(disk.path(), writes);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    EXPECT_EQ(tpkit::live::histogram_totals(tool->lines()),
              (std::map<std::string, std::uint64_t>{{"", disk_reads + disk_writes}}))
        << tool->stderr_text();
    EXPECT_EQ(tool->stderr_text(), "");
}

// Starts keyed by getpriority()'s `who`, ended by setpriority() of the same
// `who`: with room for max_pending starts, more distinct starts leave the rest
// counted as not recorded, a second start of a pending `who` is counted as
// replacing it, and only the max_pending recorded ones end.
TEST(TplatLive, PendingStartsBeyondTheLimitAreCounted)
{
    TPKIT_REQUIRE_LIVE();
    constexpr int first_who = 3'000'000; // no such process: both calls fail, harmlessly
    constexpr int max_pending = 4, whos = 10, replaced = 1;
    constexpr int not_recorded = whos - max_pending;
    auto tool = start_tplat({"syscalls:sys_enter_getpriority", "syscalls:sys_enter_setpriority",
                             "--match", "who", "--max-pending", std::to_string(max_pending), "-t",
                             own_tid(), "--unit", "ns"});
    for (int i = 0; i < whos; i++)
        getpriority(PRIO_PROCESS, first_who + i);
    static_assert(replaced == 1);
    getpriority(PRIO_PROCESS, first_who); // pending already: replaces it
    for (int i = 0; i < whos; i++)
        setpriority(PRIO_PROCESS, first_who + i, 0);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    EXPECT_EQ(tpkit::live::histogram_totals(tool->lines()),
              (std::map<std::string, std::uint64_t>{{"", max_pending}}));
    EXPECT_EQ(tool->stderr_text(), "tplat: " + std::to_string(not_recorded) +
                                       " events not counted: more than " +
                                       std::to_string(max_pending) +
                                       " starts waiting for their end (see "
                                       "--max-pending)\n"
                                       "tplat: " + std::to_string(replaced) +
                                       " starts replaced an earlier start of "
                                       "the same value that had not ended: "
                                       "those earlier starts are not counted\n");
    // And on stdout, in its one interval's lost line: both.
    std::vector<std::string> lost;
    for (const auto& line : tool->lines())
        if (auto e = tpkit::live::parse_flat_json(line); e["type"] == "lost")
            lost.push_back(e["lost_events"]);
    EXPECT_EQ(lost, std::vector<std::string>{std::to_string(not_recorded + replaced)});
}

TEST(TplatLive, BadMatchIsOneLineAndExitCode2)
{
    TPKIT_REQUIRE_LIVE();
    const std::map<std::string, std::string> cases{
        {"sector==", "bad --match 'sector==': expected FIELD or START_FIELD==END_FIELD"},
        {"block_rq_insert.sector==sector", "'block_rq_insert' is neither block:block_rq_issue nor "
                                           "block:block_rq_complete"},
        {"block_rq_issue.sector==block_rq_issue.sector", "both sides name the same event"},
        {"rwbs", "--match: field 'rwbs' of block:block_rq_issue is 'char[10]'"},
    };
    for (const auto& [match, message] : cases) {
        ToolRun tool({tpkit::live::tool_path("tplat"), "block:block_rq_issue",
                      "block:block_rq_complete", "--match", match});
        EXPECT_EQ(tool.wait(10s), 2) << match;
        EXPECT_NE(tool.stderr_text().find(message), std::string::npos) << tool.stderr_text();
        EXPECT_EQ(std::count(tool.stderr_text().begin(), tool.stderr_text().end(), '\n'), 1)
            << tool.stderr_text();
    }
}
