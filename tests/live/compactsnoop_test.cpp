// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// compactsnoop against compactions the test starts: a child of a known PID and comm writes 1 to
// /proc/sys/vm/compact_memory (or to a node's compact file), which compacts every populated zone
// of the nodes in the writer's own context, one compact_zone() run each. Exactly those runs
// appear, in zone order, with the writer's PID, each zone's node and name from /proc/zoneinfo,
// order -1, mode sync, the result the kernel's own trace of mm_compaction_end gave it, and a
// latency inside the write the child timed.
#include "compaction_writer.hpp"
#include "live.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <signal.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr std::size_t compactsnoop_links = 2;
using tpkit::live::compact_memory;
using tpkit::live::CompactionWriter;
using tpkit::live::populated_zones;
using tpkit::live::Zone;
constexpr const char* writer_comm = tpkit::live::compaction_writer_comm;

// The writer's runs as the kernel traced them: mm_compaction_end's status, in order.
std::vector<std::string> traced_statuses(const tpkit::live::TraceInstance& trace)
{
    static const std::regex end(R"(mm_compaction_end: .* status=(\w+))");
    std::vector<std::string> statuses;
    for (const auto& line : trace.lines()) {
        std::smatch m;
        if (std::regex_search(line, m, end))
            statuses.push_back(m[1]);
    }
    return statuses;
}

struct Compaction {
    std::vector<nlohmann::json> runs; // the tool's events
    std::vector<std::string> kernel_statuses;
    std::vector<Zone> zones_before, zones_after;
    pid_t writer = -1;
    std::int64_t begin_ns = 0, end_ns = 0;
    std::string tool_stderr;
};

// Compacts through `file` (every node's zones, or node `node`'s) under the tool with `args`
// and the kernel's trace of the writer's runs.
Compaction compact(const std::string& file, int node, const std::vector<std::string>& args)
{
    Compaction c;
    CompactionWriter writer(file);
    c.writer = writer.pid();
    tpkit::live::TraceInstance trace("compactsnoop");
    const std::string only_writer = "common_pid == " + std::to_string(writer.pid());
    EXPECT_EQ(trace.set_filter("compaction", "mm_compaction_end", only_writer), "");
    trace.enable("compaction", "mm_compaction_end", true);
    std::vector<std::string> argv{tpkit::live::tool_path("compactsnoop"), "--json", "--clock", "mono",
                                  "-p", std::to_string(writer.pid())};
    argv.insert(argv.end(), args.begin(), args.end());
    ToolRun tool(argv);
    EXPECT_TRUE(tool.wait_until_attached(compactsnoop_links, tpkit::live::patient(20s))) << tool.stderr_text();
    c.zones_before = populated_zones(node);
    EXPECT_TRUE(writer.write_and_wait(c.begin_ns, c.end_ns)) << "writing 1 to " << file;
    c.zones_after = populated_zones(node);
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    trace.enable("compaction", "mm_compaction_end", false);
    c.kernel_statuses = traced_statuses(trace);
    c.tool_stderr = tool.stderr_text();
    for (const auto& line : tool.lines()) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        EXPECT_TRUE(j.is_object()) << line;
        if (j.is_object() && j["type"] == "event") {
            c.runs.push_back(j);
        } else if (j.is_object()) {
            EXPECT_EQ(j, nlohmann::json::parse(R"({"type":"lost","lost_events":0})"));
        }
    }
    return c;
}

// One run per populated zone, in zone order, each as the kernel ended it.
void expect_one_run_per_zone(const Compaction& c)
{
    ASSERT_FALSE(c.zones_before.empty());
    ASSERT_EQ(c.kernel_statuses.size(), c.zones_before.size()) << "the kernel's trace";
    ASSERT_EQ(c.runs.size(), c.zones_before.size()) << nlohmann::json(c.runs).dump();
    std::int64_t total_ns = 0, previous_end_ns = c.begin_ns;
    for (std::size_t i = 0; i < c.runs.size(); i++) {
        const auto& run = c.runs[i];
        const Zone& zone = c.zones_before[i];
        SCOPED_TRACE(fmt::format("run {}: {}", i, run.dump()));
        EXPECT_EQ(run["pid"], c.writer);
        EXPECT_EQ(run["tid"], c.writer);
        EXPECT_EQ(run["comm"], writer_comm);
        EXPECT_EQ(run["node"], zone.node);
        EXPECT_EQ(run["zone"], zone.name);
        EXPECT_EQ(run["order"], -1); // the whole zone
        EXPECT_EQ(run["compact_mode"], "sync");
        EXPECT_EQ(run["status"], c.kernel_statuses[i]);
        // Each run lies inside the write, after the one before.
        const std::int64_t end_ns = run["time_ns"], latency_ns = run["latency_ns"];
        EXPECT_GE(end_ns - latency_ns, previous_end_ns);
        EXPECT_LE(end_ns, c.end_ns);
        previous_end_ns = end_ns;
        total_ns += latency_ns;
    }
    EXPECT_LE(total_ns, c.end_ns - c.begin_ns);
}

} // namespace

TEST(CompactsnoopExact, CompactMemoryOneRunPerPopulatedZone)
{
    TPKIT_REQUIRE_LIVE();
    const Compaction c = compact(compact_memory, -1, {});
    expect_one_run_per_zone(c);
    EXPECT_EQ(c.tool_stderr, "");
}

TEST(CompactsnoopExact, NodeCompactOneRunPerZoneOfTheNode)
{
    TPKIT_REQUIRE_LIVE();
    const std::string node0 = "/sys/devices/system/node/node0/compact";
    if (!std::filesystem::exists(node0))
        GTEST_SKIP() << node0 << ": a kernel without CONFIG_NUMA";
    const Compaction c = compact(node0, 0, {});
    expect_one_run_per_zone(c);
}

TEST(CompactsnoopExact, ExtendedFieldsAreTheZonesWatermarks)
{
    TPKIT_REQUIRE_LIVE();
    const Compaction c = compact(compact_memory, -1, {"-e"});
    expect_one_run_per_zone(c);
    // /proc/zoneinfo's min, low and high are min/low/high_wmark_pages(), boost included: the
    // same as the runs read where they did not move during the write.
    ASSERT_EQ(c.zones_after.size(), c.zones_before.size());
    for (std::size_t i = 0; i < c.runs.size() && i < c.zones_before.size(); i++) {
        const Zone& zone = c.zones_before[i];
        SCOPED_TRACE(fmt::format("run {}: {}", i, c.runs[i].dump()));
        if (zone == c.zones_after[i]) {
            EXPECT_EQ(c.runs[i]["min_pages"], zone.min);
            EXPECT_EQ(c.runs[i]["low_pages"], zone.low);
            EXPECT_EQ(c.runs[i]["high_pages"], zone.high);
        }
        EXPECT_LE(c.runs[i]["free_pages"].get<std::uint64_t>(), zone.present);
    }
}

TEST(CompactsnoopExact, KernelStackIsTheWritersPath)
{
    TPKIT_REQUIRE_LIVE();
    const Compaction c = compact(compact_memory, -1, {"-K"});
    expect_one_run_per_zone(c);
    for (const auto& run : c.runs) {
        bool handler = false;
        for (const auto& frame : run["kernel_stack"])
            handler = handler || frame.get<std::string>().rfind("sysctl_compaction_handler", 0) == 0;
        EXPECT_TRUE(handler) << run.dump();
    }
}

TEST(CompactsnoopExact, TextRowsHaveBccsColumns)
{
    TPKIT_REQUIRE_LIVE();
    CompactionWriter writer(compact_memory);
    ToolRun tool({tpkit::live::tool_path("compactsnoop"), "-p", std::to_string(writer.pid())});
    ASSERT_TRUE(tool.wait_until_attached(compactsnoop_links, tpkit::live::patient(20s))) << tool.stderr_text();
    const std::vector<Zone> zones = populated_zones(-1);
    std::int64_t begin_ns = 0, end_ns = 0;
    ASSERT_TRUE(writer.write_and_wait(begin_ns, end_ns));
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const auto& lines = tool.lines();
    ASSERT_EQ(lines.size(), 1 + zones.size()) << fmt::format("{}", fmt::join(lines, "\n"));
    EXPECT_EQ(lines[0], "TIME     COMM             PID     NODE ZONE         ORDER MODE      LAT(ms)           STATUS");
    static const std::regex row(R"(^\d\d:\d\d:\d\d tpk-compact +(\d+) +(\d+) +ZONE_(\S+) +-1 +SYNC +\d+\.\d{3} +[a-z_]+$)");
    for (std::size_t i = 0; i < zones.size(); i++) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(lines[1 + i], m, row)) << lines[1 + i];
        EXPECT_EQ(m[1], std::to_string(writer.pid()));
        EXPECT_EQ(m[2], std::to_string(zones[i].node));
        std::string upper;
        for (char ch : zones[i].name)
            upper += char(std::toupper(static_cast<unsigned char>(ch)));
        EXPECT_EQ(m[3], upper);
    }
}
