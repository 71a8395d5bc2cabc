// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// futexctn against futex waits of known number and length: a child's main thread waits on one
// futex word (FUTEX_WAIT_PRIVATE) exactly `rounds` times, each time woken by the child's second
// thread (FUTEX_WAKE_PRIVATE) once it has slept a known time after seeing the main thread inside
// futex(2) (futex_waits.hpp): each wait ends by that wake and returns 0. Before
// them the main thread makes `failed_waits` calls that expect 1 and return EAGAIN at once: the
// kernel never sleeps in those, and futexctn, as libbpf-tools' futexctn, counts no wait that
// returns an error.
#include "futex_waits.hpp"
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

using tpkit::live::ToolRun;

namespace {

constexpr int rounds = 6;
constexpr int failed_waits = 5;
// The waker's sleep before each wake, alternately: each wait lasts that long, plus the
// scheduler's delays: on a quiet machine far from the edges of their buckets, [8192, 16383] and
// [16384, 32767] us, [8, 15] and [16, 31] ms.
constexpr std::array<long, 2> sleeps_us = {10000, 20000};

// How long each woken wait's futex call took in the child, as it saw it: shared with the test.
long* waited_ns = nullptr;

int contend()
{
    for (int i = 0; i < failed_waits; i++)
        if (tpkit::live::futex_on_word(FUTEX_WAIT_PRIVATE, 1) != -1 || errno != EAGAIN)
            return 10 + i;
    return tpkit::live::woken_futex_waits(rounds, sleeps_us, waited_ns);
}

// The log2 bucket (its low end) of a value, as the histograms key it.
std::uint64_t bucket_of(std::uint64_t value)
{
    return value < 2 ? 0 : std::uint64_t(1) << (63 - __builtin_clzll(value));
}

// Each wait lasted at least the waker's sleep and at most what the child saw around its futex
// call: in microseconds (or milliseconds), the buckets of those two bounds. A bucket holds at
// least the waits whose bounds both fall in it, at most those whose bounds enclose it (on a slow
// machine a wait can straddle two buckets), and the histogram all of them.
void expect_waits_within_bounds(const std::map<std::uint64_t, std::uint64_t>& buckets, std::uint64_t unit_us)
{
    std::vector<std::pair<std::uint64_t, std::uint64_t>> bounds;
    std::uint64_t total = 0;
    for (int i = 0; i < rounds; i++)
        bounds.emplace_back(bucket_of(std::uint64_t(sleeps_us[i % 2]) / unit_us),
                            bucket_of(std::uint64_t(waited_ns[i]) / 1000 / unit_us));
    for (const auto& [low, count] : buckets)
        total += count;
    EXPECT_EQ(total, std::uint64_t(rounds));
    std::map<std::uint64_t, std::uint64_t> all = buckets;
    for (const auto& [lo, hi] : bounds)
        all.emplace(lo, 0), all.emplace(hi, 0);
    for (const auto& [bucket, count] : all) {
        std::uint64_t least = 0, most = 0;
        for (const auto& [lo, hi] : bounds) {
            least += lo == bucket && hi == bucket;
            most += lo <= bucket && bucket <= hi;
        }
        EXPECT_GE(count, least) << "bucket " << bucket;
        EXPECT_LE(count, most) << "bucket " << bucket;
    }
}

std::unique_ptr<ToolRun> futexctn(std::vector<std::string> options)
{
    constexpr std::size_t links = 2; // sys_enter_futex, sys_exit_futex
    return tpkit::live::attached_json_tool("futexctn", std::move(options), links);
}

// The histogram lines futexctn printed at SIGINT for the futex word at `lock`, and how many
// lines it printed in all.
std::vector<std::string> lines_of_lock(ToolRun& tool, const std::string& lock, std::size_t* all)
{
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.stderr_text(), "");
    std::vector<std::string> ours;
    *all = 0;
    for (const auto& line : tool.lines()) {
        auto h = tpkit::live::parse_flat_json(line);
        EXPECT_EQ(h["type"], "hist") << line;
        EXPECT_EQ(h["event"], "syscalls:sys_exit_futex") << line;
        ++*all;
        if (h["lock"] == lock)
            ours.push_back(line);
    }
    return ours;
}

} // namespace

TEST(FutexctnExact, WokenWaitsCountedOnceEachInTheirSleepsBuckets)
{
    TPKIT_REQUIRE_LIVE();
    waited_ns = static_cast<long*>(
        mmap(nullptr, rounds * sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(waited_ns, MAP_FAILED);
    tpkit::live::ScriptedChild child("tpk-futexctn", {}, contend);
    const std::string pid = std::to_string(child.pid());
    const std::string lock = tpkit::live::futex_word_address();

    auto by_process = futexctn({"-p", pid, "-s"});
    auto by_thread = futexctn({"-p", pid, "-m"});
    auto one_lock = futexctn({"-p", pid, "-s", "-l", lock});
    ASSERT_EQ(child.go_and_wait(), 0);

    // -s: one histogram for the word, the process's, in microseconds; the EAGAIN calls are not in
    // it (they would add failed_waits values below 8192).
    std::size_t all = 0;
    auto process = lines_of_lock(*by_process, lock, &all);
    ASSERT_EQ(process.size(), 1u);
    auto h = tpkit::live::parse_flat_json(process[0]);
    EXPECT_EQ(h["pid"], pid);
    EXPECT_EQ(h.count("tid"), 0u);
    EXPECT_EQ(h.count("ustack"), 0u);
    EXPECT_EQ(h["comm"], "tpk-futexctn");
    EXPECT_EQ(h["unit"], "usecs");
    EXPECT_EQ(h["total"], std::to_string(rounds));
    expect_waits_within_bounds(tpkit::live::histogram_buckets(process), 1);

    // By thread and stack: the main thread's, from one call site, in milliseconds.
    auto thread = lines_of_lock(*by_thread, lock, &all);
    ASSERT_EQ(thread.size(), 1u);
    h = tpkit::live::parse_flat_json(thread[0]);
    EXPECT_EQ(h["pid"], pid);
    EXPECT_EQ(h["tid"], pid);
    EXPECT_EQ(h["unit"], "msecs");
    EXPECT_EQ(h["total"], std::to_string(rounds));
    EXPECT_TRUE(h["ustack"].starts_with("[")) << thread[0];
    expect_waits_within_bounds(tpkit::live::histogram_buckets(thread), 1000);

    // -l: that word only, of every futex word the process waited on (pthread_join's too).
    auto only = lines_of_lock(*one_lock, lock, &all);
    EXPECT_EQ(all, 1u);
    ASSERT_EQ(only.size(), 1u);
    expect_waits_within_bounds(tpkit::live::histogram_buckets(only), 1);
}

TEST(FutexctnLive, LockMustBeHexadecimal)
{
    TPKIT_REQUIRE_LIVE();
    ToolRun run({tpkit::live::tool_path("futexctn"), "-l", "0xzz", "-d", "5"});
    EXPECT_EQ(run.wait(std::chrono::seconds(20)), 2) << run.stderr_text();
    const std::string err = run.stderr_text();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find("not an address in hexadecimal"), std::string::npos) << err;
}
