// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// numamove against migrations the test starts: a child of a known PID writes 1 to
// /proc/sys/vm/compact_memory, and the compaction migrates pages in the writer's own context
// (reason compaction). The kernel's own trace of mm_migrate_pages for the writer gives the calls
// and the pages each migrated and failed to: numamove -p WRITER counts exactly those, each call
// timed, inside the write the child timed. (A machine of one NUMA node migrates no page for
// migrate_pages(2), move_pages(2) or mbind(2): every page is on its node already.)
#include "compaction_writer.hpp"
#include "live.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <signal.h>

#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr std::size_t numamove_links = 2;

// Per reason, what migrate_pages() reported: the kernel's trace or the tool's count lines summed.
struct Migrations {
    std::uint64_t calls = 0, pages = 0, failed = 0, thp = 0, thp_failed = 0, thp_split = 0;
    bool operator==(const Migrations&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Migrations& m)
{
    return out << fmt::format("{{calls {} pages {} failed {} thp {} thp_failed {} thp_split {}}}", m.calls,
                              m.pages, m.failed, m.thp, m.thp_failed, m.thp_split);
}

std::map<std::string, Migrations> traced(const tpkit::live::TraceInstance& trace)
{
    static const std::regex end(R"(mm_migrate_pages: nr_succeeded=(\d+) nr_failed=(\d+) nr_thp_succeeded=(\d+) nr_thp_failed=(\d+) nr_thp_split=(\d+) .*reason=(\w+))");
    std::map<std::string, Migrations> by_reason;
    for (const auto& line : trace.lines()) {
        std::smatch m;
        if (!std::regex_search(line, m, end))
            continue;
        // The format's name of MR_SYSCALL; the tool names the enum's members.
        Migrations& r = by_reason[m[6] == "syscall_or_cpuset" ? "syscall" : m[6].str()];
        r.calls++;
        r.pages += std::stoull(m[1]);
        r.failed += std::stoull(m[2]);
        r.thp += std::stoull(m[3]);
        r.thp_failed += std::stoull(m[4]);
        r.thp_split += std::stoull(m[5]);
    }
    return by_reason;
}

// numamove -p WRITER with `args` over the writer's compaction, and the kernel's trace of it.
struct MigrationRun {
    std::vector<std::string> lines;
    std::string stderr_text;
    std::map<std::string, Migrations> kernel;
    std::int64_t begin_ns = 0, end_ns = 0;
};

MigrationRun numamove_over_compaction(const std::vector<std::string>& args)
{
    MigrationRun run;
    tpkit::live::CompactionWriter writer(tpkit::live::compact_memory);
    tpkit::live::TraceInstance trace("numamove");
    EXPECT_EQ(trace.set_filter("migrate", "mm_migrate_pages", "common_pid == " + std::to_string(writer.pid())), "");
    trace.enable("migrate", "mm_migrate_pages", true);
    std::vector<std::string> argv{tpkit::live::tool_path("numamove"), "-p", std::to_string(writer.pid())};
    argv.insert(argv.end(), args.begin(), args.end());
    ToolRun tool(argv);
    EXPECT_TRUE(tool.wait_until_attached(numamove_links, tpkit::live::patient(20s))) << tool.stderr_text();
    EXPECT_TRUE(writer.write_and_wait(run.begin_ns, run.end_ns));
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    trace.enable("migrate", "mm_migrate_pages", false);
    run.kernel = traced(trace);
    run.lines = tool.lines();
    run.stderr_text = tool.stderr_text();
    return run;
}

} // namespace

TEST(NumamoveExact, CompactionMigrationsOfTheWriterAsTheKernelTracedThem)
{
    TPKIT_REQUIRE_LIVE();
    const MigrationRun run = numamove_over_compaction({"--json"});
    const auto& kernel = run.kernel;
    EXPECT_EQ(run.stderr_text, "");

    std::map<std::string, Migrations> seen;
    std::map<std::string, std::uint64_t> timed;
    std::map<std::string, double> time_ms;
    std::map<std::string, std::size_t> lines_of;
    std::size_t numa_lines = 0, intervals = 0;
    std::string last_time;
    for (const auto& line : run.lines) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        ASSERT_TRUE(j.is_object()) << line;
        ASSERT_EQ(j["type"], "count") << line; // nothing lost
        EXPECT_EQ(j["event"], "migrate:mm_migrate_pages");
        const std::string reason = j["reason"];
        if (reason == "numa_misplaced")
            numa_lines++;
        if (j["time_ns"].dump() != last_time)
            intervals++, last_time = j["time_ns"].dump();
        if (j["migrations"] == 0)
            continue;
        Migrations& m = seen[reason];
        m.calls += j["migrations"].get<std::uint64_t>();
        m.pages += j["pages"].get<std::uint64_t>();
        m.failed += j["failed"].get<std::uint64_t>();
        m.thp += j["thp"].get<std::uint64_t>();
        m.thp_failed += j["thp_failed"].get<std::uint64_t>();
        m.thp_split += j["thp_split"].get<std::uint64_t>();
        timed[reason] += j["timed"].get<std::uint64_t>();
        time_ms[reason] += j["time_ms"].get<double>();
        lines_of[reason]++;
    }
    // The NUMA reason, libbpf-tools' own, has its line every interval.
    EXPECT_EQ(numa_lines, intervals);
    ASSERT_TRUE(kernel.contains("compaction")) << "the compaction migrated no page";
    EXPECT_EQ(seen, kernel);
    for (const auto& [reason, m] : seen) {
        SCOPED_TRACE(reason);
        EXPECT_EQ(timed[reason], m.calls); // every call started after the tool
        // Each line's milliseconds are rounded to the microsecond: half of one at most.
        EXPECT_LE(time_ms[reason], double(run.end_ns - run.begin_ns) / 1e6 + 0.0005 * double(lines_of[reason]));
    }
}

TEST(NumamoveExact, TextLinesAreLibbpfToolsOnes)
{
    TPKIT_REQUIRE_LIVE();
    const MigrationRun run = numamove_over_compaction({});
    const auto& lines = run.lines;
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines[0], "TIME          NUMA_migrations NUMA_migrations_ms");
    // No NUMA-misplaced page moves for the writer's compaction.
    static const std::regex row(R"(^\d\d:\d\d:\d\d {20}0 {18}0$)");
    for (std::size_t i = 1; i < lines.size(); i++)
        EXPECT_TRUE(std::regex_match(lines[i], row)) << lines[i];
}

TEST(NumamoveExact, AllReasonsTableHasTheCompactionRow)
{
    TPKIT_REQUIRE_LIVE();
    const MigrationRun run = numamove_over_compaction({"--all-reasons"});
    ASSERT_TRUE(run.kernel.contains("compaction"));
    // Each row: REASON MIGRATIONS PAGES FAILED THP THP_FAILED THP_SPLIT TIMED TIME (ms).
    static const std::regex row(R"(^(\w+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+\.\d{3})$)");
    Migrations compaction;
    bool heading = false;
    for (const auto& line : run.lines) {
        heading = heading || line.rfind("REASON ", 0) == 0;
        std::smatch m;
        if (!std::regex_match(line, m, row) || m[1] != "compaction")
            continue;
        compaction.calls += std::stoull(m[2]);
        compaction.pages += std::stoull(m[3]);
        compaction.failed += std::stoull(m[4]);
        compaction.thp += std::stoull(m[5]);
        compaction.thp_failed += std::stoull(m[6]);
        compaction.thp_split += std::stoull(m[7]);
    }
    EXPECT_TRUE(heading) << fmt::format("{}", fmt::join(run.lines, "\n"));
    EXPECT_EQ(compaction, run.kernel.at("compaction")) << fmt::format("{}", fmt::join(run.lines, "\n"));
}
