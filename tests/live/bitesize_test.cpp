// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// bitesize against a loop device of the test's own: direct reads of known sizes by a child with
// a name of its own land in their log2 buckets (kilobytes) under that name, and the test's own
// reads under its name or, with -c, nowhere.
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

constexpr const char* bitesize_comm = "tpk-bitesize";

// 5 reads of 4 KiB, 3 of 16 KiB, 2 of 64 KiB: buckets [4, 7], [16, 31], [64, 127].
const std::vector<DirectIo> child_reads{{0, 4096},           {8192, 4096},   {16384, 4096},
                                        {24576, 4096},       {32768, 4096},  {65536, 16384},
                                        {131072, 16384},     {196608, 16384}, {1 << 20, 65536},
                                        {(1 << 20) + 131072, 65536}};
const std::map<std::uint64_t, std::uint64_t> child_buckets{{4, 5}, {16, 3}, {64, 2}};

// The test's own reads, after the child's: 8 KiB each, bucket [8, 15].
const std::vector<DirectIo> test_reads{{2 << 20, 8192}, {3 << 20, 8192}, {0, 8192}};

std::unique_ptr<ToolRun> start_bitesize(const std::vector<std::string>& args)
{
    return tpkit::live::start_attached("bitesize", args, 2); // block_rq_insert and _issue
}

// The child's reads, then the test's.
void read_from_child_and_test(const LoopDevice& disk)
{
    pid_t child = tpkit::live::start_child(bitesize_comm, [&] {
        tpkit::live::read_direct(disk.path(), child_reads);
    });
    ASSERT_EQ(tpkit::live::reap(child), 0);
    tpkit::live::read_direct(disk.path(), test_reads);
}

} // namespace

TEST(BitesizeExact, SizesInTheirBucketsByProcessName)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk, other;
    auto tool = start_bitesize({"-d", disk.name()});
    read_from_child_and_test(disk);
    tpkit::live::read_direct(other.path(), child_reads);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    EXPECT_EQ(tpkit::live::histogram_buckets(tool->lines(), bitesize_comm), child_buckets);
    EXPECT_EQ(tpkit::live::histogram_buckets(tool->lines(), tpkit::live::own_comm()),
              (std::map<std::uint64_t, std::uint64_t>{{8, test_reads.size()}}));
    EXPECT_EQ(tpkit::live::histogram_totals(tool->lines()).size(), 2u); // the child's, the test's
}

TEST(BitesizeExact, OneProcessNameWithC)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk;
    auto tool = start_bitesize({"-d", disk.name(), "-c", bitesize_comm});
    read_from_child_and_test(disk);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    EXPECT_EQ(tpkit::live::histogram_buckets(tool->lines(), bitesize_comm), child_buckets);
    EXPECT_EQ(tpkit::live::histogram_totals(tool->lines()),
              (std::map<std::string, std::uint64_t>{{bitesize_comm, child_reads.size()}}));
}
