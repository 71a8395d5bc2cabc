// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biolatency against loop devices of the test's own: every direct read or write the test makes
// is one request, completed once, so each histogram counts exactly those, on the disk and with
// the operation and flags they had, and nothing of the other disk.
#include "live.hpp"
#include "loop_device.hpp"

#include <signal.h>

#include <map>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::DirectIo;
using tpkit::live::LoopDevice;
using tpkit::live::ToolRun;

namespace {

// `count` I/Os of 4 KiB at distinct offsets, a block apart.
std::vector<DirectIo> blocks(int count, std::uint64_t first = 0)
{
    std::vector<DirectIo> ios;
    for (int i = 0; i < count; i++)
        ios.push_back({first + 8192u * i, 4096});
    return ios;
}

// The histograms' totals of keys that begin with `prefix`.
std::map<std::string, std::uint64_t> totals_of(const std::vector<std::string>& lines,
                                               const std::string& prefix)
{
    std::map<std::string, std::uint64_t> out;
    for (const auto& [key, total] : tpkit::live::histogram_totals(lines))
        if (key.rfind(prefix, 0) == 0)
            out[key] = total;
    return out;
}

// biolatency's BPF links: block_rq_issue and block_rq_complete, and with -Q block_rq_insert.
constexpr std::size_t biolatency_links = 2;
constexpr std::size_t biolatency_queued_links = 3;

} // namespace

TEST(BiolatencyExact, CountsEveryRequestOfTheSelectedDiskOnly)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk, other;
    constexpr int disk_reads = 7, other_reads = 5, disk_writes = 3;
    auto tool = tpkit::live::start_attached("biolatency", {"-d", disk.name()}, biolatency_links);
    tpkit::live::read_direct(disk.path(), blocks(disk_reads));
    tpkit::live::read_direct(other.path(), blocks(other_reads));
    tpkit::live::write_direct(disk.path(), blocks(disk_writes, 1 << 20));
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    EXPECT_EQ(tpkit::live::histogram_totals(tool->lines()),
              (std::map<std::string, std::uint64_t>{{"", disk_reads + disk_writes}}))
        << tool->stderr_text();
}

TEST(BiolatencyExact, PerDiskAndFlagsWithQueueTime)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice first, second;
    constexpr int first_reads = 3, second_reads = 4, second_writes = 2;
    // -Q: from insertion where a request is inserted (three programs attached).
    auto tool = tpkit::live::start_attached("biolatency", {"-D", "-F", "-Q", "-m"},
                                            biolatency_queued_links);
    tpkit::live::read_direct(first.path(), blocks(first_reads));
    tpkit::live::read_direct(second.path(), blocks(second_reads));
    tpkit::live::write_direct(second.path(), blocks(second_writes, 1 << 20));
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    // A direct read or write of a block device waits for its one bio (submit_bio_wait), which
    // marks it synchronous; direct writes are idle too (dio_bio_write_op).
    EXPECT_EQ(totals_of(tool->lines(), first.name() + " "),
              (std::map<std::string, std::uint64_t>{{first.name() + " Sync-Read", first_reads}}));
    EXPECT_EQ(totals_of(tool->lines(), second.name() + " "),
              (std::map<std::string, std::uint64_t>{{second.name() + " Sync-Read", second_reads},
                                                    {second.name() + " Idle-Sync-Write", second_writes}}));
}

// Every block tool: the disk is looked up before anything is loaded.
TEST(BiolatencyExact, UnknownDiskOfEveryBlockToolIsOneLineAndExitCode4)
{
    for (const std::string name : {"biolatency", "biosnoop", "bitesize", "biopattern", "biotop"}) {
        ToolRun tool({tpkit::live::tool_path(name), "-d", "tpk-no-such-disk"});
        EXPECT_EQ(tool.wait(10s), 4) << name;
        EXPECT_EQ(tool.stderr_text(),
                  name + ": unknown disk 'tpk-no-such-disk': not in /sys/class/block\n");
    }
}
