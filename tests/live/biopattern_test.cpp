// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biopattern against a loop device of the test's own: after a first read (nothing to follow),
// reads that each begin where the previous ended are sequential and the others random, exactly.
#include "live.hpp"
#include "loop_device.hpp"

#include <signal.h>

#include <map>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::LoopDevice;

TEST(BiopatternExact, SequentialAndRandomCountsOfTheDisk)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk, other;
    constexpr std::size_t links = 1; // block_rq_complete
    auto tool = tpkit::live::start_attached("biopattern", {"-d", disk.name()}, links);
    // The first read, then sequential ones (4 KiB each), then random ones; each but the first
    // follows a read, sequentially or not, and is counted.
    constexpr std::size_t read_bytes = 4096;
    constexpr int sequential_reads = 6;
    const std::vector<std::uint64_t> random_offsets{1u << 20, 3u << 20, 2u << 20, 512u << 10};
    const int random_reads = static_cast<int>(random_offsets.size());
    const int counted_reads = sequential_reads + random_reads;
    std::vector<tpkit::live::DirectIo> reads{{0, read_bytes}};
    for (int i = 1; i <= sequential_reads; i++)
        reads.push_back({read_bytes * i, read_bytes});
    for (std::uint64_t offset : random_offsets)
        reads.push_back({offset, read_bytes});
    tpkit::live::read_direct(disk.path(), reads);
    tpkit::live::read_direct(other.path(), reads);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();

    std::vector<std::map<std::string, std::string>> rows;
    for (const auto& line : tool->lines())
        if (auto row = tpkit::live::parse_flat_json(line); row.count("disk")) {
            EXPECT_EQ(row["type"], "count");
            row.erase("type");
            row.erase("time_ns"); // when it was read
            rows.push_back(row);
        }
    const std::map<std::string, std::string> expected{
        {"disk", disk.name()},
        {"rnd", std::to_string(100 * random_reads / counted_reads)}, // percent
        {"seq", std::to_string(100 * sequential_reads / counted_reads)},
        {"count", std::to_string(counted_reads)},
        {"kbytes", std::to_string(counted_reads * read_bytes / 1024)}};
    ASSERT_EQ(rows.size(), 1u) << tool->stderr_text();
    EXPECT_EQ(rows[0], expected);
}
