// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biotop against a loop device of the test's own: a child with a name of its own reads and
// writes known amounts with direct I/O; its rows (reads, then writes, sorted by bytes) carry its
// pid, the disk and exactly its request counts and kilobytes, and -r 1 keeps only the top one.
#include "live.hpp"
#include "loop_device.hpp"

#include <signal.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

using tpkit::live::LoopDevice;

namespace {

constexpr const char* child_comm = "tpk-biotop";

std::vector<std::map<std::string, std::string>> rows_of(const tpkit::live::ToolRun& tool)
{
    std::vector<std::map<std::string, std::string>> rows;
    for (const auto& line : tool.lines())
        if (auto row = tpkit::live::parse_flat_json(line); row.count("pid"))
            rows.push_back(row);
    return rows;
}

// biotop ARGS (one interval, printed when stopped) while the child reads 6 × 8 KiB and writes
// 2 × 4 KiB; gives the rows and the child's pid.
std::vector<std::map<std::string, std::string>> rows_while_child_works(
    const LoopDevice& disk, std::vector<std::string> args, pid_t& child)
{
    args.insert(args.end(), {"-d", disk.name(), "3600"});
    auto tool = tpkit::live::start_attached("biotop", args, tpkit::live::request_tracking_links());
    child = tpkit::live::start_child(child_comm, [&] {
        tpkit::live::read_direct(disk.path(), {{0, 8192},
                                               {65536, 8192},
                                               {131072, 8192},
                                               {196608, 8192},
                                               {262144, 8192},
                                               {327680, 8192}});
        tpkit::live::write_direct(disk.path(), {{1 << 20, 4096}, {2 << 20, 4096}});
    });
    EXPECT_EQ(tpkit::live::reap(child), 0);
    EXPECT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    return rows_of(*tool);
}

std::map<std::string, std::string> expected_row(const LoopDevice& disk, pid_t child, bool write)
{
    struct stat st{};
    EXPECT_EQ(stat(disk.path().c_str(), &st), 0);
    std::map<std::string, std::string> row{{"pid", std::to_string(child)},
                                           {"comm", child_comm},
                                           {"d", write ? "W" : "R"},
                                           {"maj", std::to_string(major(st.st_rdev))},
                                           {"min", std::to_string(minor(st.st_rdev))},
                                           {"disk", disk.name()},
                                           {"i_o", write ? "2" : "6"},
                                           {"kbytes", write ? "8" : "48"}};
    return row;
}

// The row without its average time, which no test can know.
// A row without what differs from run to run: the average time and when it was read.
std::map<std::string, std::string> without_time(std::map<std::string, std::string> row)
{
    EXPECT_TRUE(row.count("avgms"));
    EXPECT_EQ(row["type"], "count");
    EXPECT_TRUE(row.count("time_ns"));
    for (const char* key : {"avgms", "type", "time_ns"})
        row.erase(key);
    return row;
}

} // namespace

TEST(BiotopExact, RowsOfTheSubmitterWithExactCountsAndBytes)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk;
    pid_t child = 0;
    auto rows = rows_while_child_works(disk, {"-s", "bytes"}, child);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(without_time(rows[0]), expected_row(disk, child, false));
    EXPECT_EQ(without_time(rows[1]), expected_row(disk, child, true));
}

TEST(BiotopExact, RowsLimitKeepsTheTopOne)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk;
    pid_t child = 0;
    // By requests: the 6 reads before the 2 writes.
    auto rows = rows_while_child_works(disk, {"-s", "io", "-r", "1"}, child);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(without_time(rows[0]), expected_row(disk, child, false));
}
