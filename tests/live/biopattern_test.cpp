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
    auto tool = tpkit::live::start_attached("biopattern", {"-d", disk.name()}, 1);
    // The first read, then 6 sequential ones (4 KiB each), then 4 random ones.
    std::vector<tpkit::live::DirectIo> reads{{0, 4096}};
    for (int i = 1; i <= 6; i++)
        reads.push_back({4096u * i, 4096});
    for (std::uint64_t offset : {1u << 20, 3u << 20, 2u << 20, 512u << 10})
        reads.push_back({offset, 4096});
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
        {"disk", disk.name()}, {"rnd", "40"}, {"seq", "60"}, {"count", "10"}, {"kbytes", "40"}};
    ASSERT_EQ(rows.size(), 1u) << tool->stderr_text();
    EXPECT_EQ(rows[0], expected);
}
