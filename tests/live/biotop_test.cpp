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

// The child's I/O: reads of 8 KiB, 64 KiB apart, then writes of 4 KiB, 1 MiB apart.
constexpr int biotop_reads = 6;
constexpr std::uint64_t biotop_read_bytes = 8192;
constexpr int biotop_writes = 2;
constexpr std::uint64_t biotop_write_bytes = 4096;

std::vector<std::map<std::string, std::string>> rows_of(const tpkit::live::ToolRun& tool)
{
    std::vector<std::map<std::string, std::string>> rows;
    for (const auto& line : tool.lines())
        if (auto row = tpkit::live::parse_flat_json(line); row.count("pid"))
            rows.push_back(row);
    return rows;
}

// biotop ARGS (one interval, printed when stopped) while the child reads and writes; gives the
// rows and the child's pid.
std::vector<std::map<std::string, std::string>> rows_while_child_works(
    const LoopDevice& disk, std::vector<std::string> args, pid_t& child)
{
    args.insert(args.end(), {"-d", disk.name(), "3600"});
    auto tool = tpkit::live::start_attached("biotop", args, tpkit::live::request_tracking_links());
    std::vector<tpkit::live::DirectIo> reads, writes;
    for (int i = 0; i < biotop_reads; i++)
        reads.push_back({65536u * i, biotop_read_bytes});
    for (int i = 1; i <= biotop_writes; i++)
        writes.push_back({(1u << 20) * i, biotop_write_bytes});
    child = tpkit::live::start_child(child_comm, [&] {
        tpkit::live::read_direct(disk.path(), reads);
        tpkit::live::write_direct(disk.path(), writes);
    });
    EXPECT_EQ(tpkit::live::reap(child), 0);
    EXPECT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    return rows_of(*tool);
}

std::map<std::string, std::string> expected_row(const LoopDevice& disk, pid_t child, bool write)
{
    struct stat st{};
    EXPECT_EQ(stat(disk.path().c_str(), &st), 0);
    const int ios = write ? biotop_writes : biotop_reads;
    const std::uint64_t bytes = ios * (write ? biotop_write_bytes : biotop_read_bytes);
    std::map<std::string, std::string> row{{"pid", std::to_string(child)},
                                           {"comm", child_comm},
                                           {"d", write ? "W" : "R"},
                                           {"maj", std::to_string(major(st.st_rdev))},
                                           {"min", std::to_string(minor(st.st_rdev))},
                                           {"disk", disk.name()},
                                           {"i_o", std::to_string(ios)},
                                           {"kbytes", std::to_string(bytes / 1024)}};
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
    // By bytes: the reads (more of them) before the writes.
    static_assert(biotop_reads * biotop_read_bytes > biotop_writes * biotop_write_bytes);
    auto rows = rows_while_child_works(disk, {"-s", "bytes"}, child);
    ASSERT_EQ(rows.size(), 2u); // the reads' row, the writes' row
    EXPECT_EQ(without_time(rows[0]), expected_row(disk, child, false));
    EXPECT_EQ(without_time(rows[1]), expected_row(disk, child, true));
}

TEST(BiotopExact, RowsLimitKeepsTheTopOne)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk;
    pid_t child = 0;
    // By requests: the reads (more of them) before the writes.
    static_assert(biotop_reads > biotop_writes);
    constexpr std::size_t rows_limit = 1;
    auto rows = rows_while_child_works(disk, {"-s", "io", "-r", std::to_string(rows_limit)}, child);
    ASSERT_EQ(rows.size(), rows_limit);
    EXPECT_EQ(without_time(rows[0]), expected_row(disk, child, false));
}
