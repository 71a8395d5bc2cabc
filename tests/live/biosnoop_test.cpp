// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biosnoop against a loop device of the test's own: each direct read and write the test makes is
// one line, in order, with its sector, size and operation, the disk, and this process as the one
// that submitted it; I/O to another disk is left out.
#include "live.hpp"
#include "loop_device.hpp"

#include <signal.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::DirectIo;
using tpkit::live::LoopDevice;
using tpkit::live::ToolRun;

namespace {

std::unique_ptr<ToolRun> start_biosnoop(const std::vector<std::string>& args)
{
    return tpkit::live::start_attached("biosnoop", args, tpkit::live::request_tracking_links());
}

std::vector<std::map<std::string, std::string>> events_of(const ToolRun& tool)
{
    std::vector<std::map<std::string, std::string>> events;
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (e.count("sector"))
            events.push_back(std::move(e));
    }
    return events;
}

} // namespace

TEST(BiosnoopExact, EveryRequestWithItsSectorSizeAndSubmitter)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk, other;
    auto tool = start_biosnoop({"-Q", "-d", disk.name()});
    const std::vector<DirectIo> reads{{0, 4096}, {65536, 8192}, {1 << 20, 16384}, {3 << 20, 4096}};
    const std::vector<DirectIo> writes{{2 << 20, 4096}, {(2 << 20) + 8192, 12288}};
    tpkit::live::read_direct(disk.path(), reads);
    tpkit::live::read_direct(other.path(), reads);
    tpkit::live::write_direct(disk.path(), writes);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();

    auto events = events_of(*tool);
    ASSERT_EQ(events.size(), reads.size() + writes.size()) << tool->stderr_text();
    const std::string comm = tpkit::live::own_comm();
    for (std::size_t i = 0; i < events.size(); i++) {
        const bool read = i < reads.size();
        const DirectIo& io = read ? reads[i] : writes[i - reads.size()];
        auto& e = events[i];
        SCOPED_TRACE("I/O " + std::to_string(i));
        EXPECT_EQ(e["sector"], std::to_string(io.offset / 512));
        EXPECT_EQ(e["bytes"], std::to_string(io.bytes));
        // A direct read or write of a block device waits for its one bio (submit_bio_wait),
        // which marks it synchronous.
        EXPECT_EQ(e["t"], read ? "RS" : "WS");
        EXPECT_EQ(e["disk"], disk.name());
        EXPECT_EQ(e["pid"], std::to_string(getpid()));
        EXPECT_EQ(e["tid"], std::to_string(gettid()));
        EXPECT_EQ(e["comm"], comm);
        EXPECT_GT(std::stoull(e["latency_ns"]), 0u);
        EXPECT_TRUE(e.count("queue_ns")) << "-Q: a queued time, or null when issued at once";
    }
}

TEST(BiosnoopExact, MinimumLatencyLeavesOutFasterRequests)
{
    TPKIT_REQUIRE_LIVE();
    LoopDevice disk;
    // No request to a loop device over a file in memory takes a minute.
    auto tool = start_biosnoop({"-d", disk.name(), "--min-ms", "60000"});
    tpkit::live::read_direct(disk.path(), {{0, 4096}, {8192, 4096}});
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    EXPECT_TRUE(events_of(*tool).empty());
    EXPECT_EQ(tool->lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
}

TEST(BiosnoopExact, PartitionSelectsItsOwnRequestsWithSectorsOnTheDisk)
{
    TPKIT_REQUIRE_LIVE();
    constexpr int partitions = 2;
    LoopDevice disk(4 << 20, partitions);
    const std::string first = "/dev/" + disk.partition_name(1);
    const std::string second = "/dev/" + disk.partition_name(2);
    auto tool = start_biosnoop({"-d", disk.partition_name(1)});
    const std::vector<DirectIo> first_reads{{0, 4096}, {8192, 8192}};
    tpkit::live::read_direct(first, first_reads);
    tpkit::live::read_direct(second, {{0, 4096}});
    // The same sectors as the first partition's, through the whole disk: not the partition's I/O.
    tpkit::live::read_direct(disk.path(), {{LoopDevice::partition_start(1) * 512, 4096}});
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();

    auto events = events_of(*tool);
    ASSERT_EQ(events.size(), first_reads.size()) << tool->stderr_text();
    // Sectors of the disk (the partition's offset added), the disk's name.
    const std::uint64_t start = LoopDevice::partition_start(1);
    EXPECT_EQ(events[0]["sector"], std::to_string(start));
    EXPECT_EQ(events[0]["bytes"], "4096");
    EXPECT_EQ(events[1]["sector"], std::to_string(start + 16));
    EXPECT_EQ(events[1]["bytes"], "8192");
    for (auto& e : events) {
        EXPECT_EQ(e["disk"], disk.name());
        EXPECT_EQ(e["pid"], std::to_string(getpid()));
    }
}
