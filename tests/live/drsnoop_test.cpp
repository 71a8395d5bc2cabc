// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// drsnoop against real reclaim: a child in a small memory cgroup of its own lazily frees pages
// (MADV_FREE) and then allocates past the limit, so the kernel reclaims in that child. The
// kernel's own trace of the same child's reclaim ends is the oracle: the tool must report each
// of them, in order, with the same kind and the same number of pages.
#include "cgroup_scope.hpp"
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include <tpkit/kernel/symbols.hpp>

#include <fmt/format.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::MemoryCgroup;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;
using tpkit::live::TraceInstance;

namespace {

constexpr std::size_t MiB = 1u << 20;
constexpr std::size_t limit = 16 * MiB;

// A reclaim as (kind, pages): "memcg" or "direct".
using Reclaim = std::pair<std::string, std::string>;

// Fresh anonymous memory, every page written so that it is charged; nullptr on failure.
char* touched(std::size_t bytes)
{
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return nullptr;
    for (std::size_t i = 0; i < bytes; i += 4096)
        static_cast<volatile char*>(p)[i] = 1;
    return static_cast<char*>(p);
}

// Half the limit lazily freed, then three quarters of it more: the cgroup must reclaim the lazily
// freed pages (no swap needed), and the child does not run out of memory.
int reclaim_in_cgroup()
{
    char* lazy = touched(limit / 2);
    if (!lazy || madvise(lazy, limit / 2, MADV_FREE) != 0)
        return 1;
    return touched(limit * 3 / 4) ? 0 : 2;
}

std::vector<Reclaim> traced_reclaims(const std::vector<std::string>& lines)
{
    static const std::regex end_re(R"(mm_vmscan_(memcg|direct)_reclaim_end: nr_reclaimed=(\d+))");
    std::vector<Reclaim> out;
    std::smatch m;
    for (const auto& line : lines)
        if (std::regex_search(line, m, end_re))
            out.emplace_back(m[1], m[2]);
    return out;
}

} // namespace

TEST(DrsnoopExact, ReportsEveryReclaimTheKernelTracedForTheChild)
{
    TPKIT_REQUIRE_LIVE();
    TPKIT_REQUIRE_MEMORY_CGROUP();
    MemoryCgroup cgroup("drsnoop", limit);
    ScriptedChild child("tpk-reclaim", {}, reclaim_in_cgroup);
    cgroup.add(child.pid());
    const std::string pid = std::to_string(child.pid());

    TraceInstance trace("drsnoop");
    for (const char* event : {"mm_vmscan_memcg_reclaim_end", "mm_vmscan_direct_reclaim_end"}) {
        ASSERT_EQ(trace.set_filter("vmscan", event, "common_pid == " + pid), "");
        trace.enable("vmscan", event, true);
    }
    // -e where the kernel lists vm_zone_stat (CONFIG_KALLSYMS_ALL: Debian's kernels do).
    const bool extended = tpkit::kernel_symbol_address("vm_zone_stat").has_value();
    std::vector<std::string> argv{tpkit::live::tool_path("drsnoop"), "--json", "-p", pid};
    if (extended)
        argv.push_back("-e");
    ToolRun tool(argv);
    constexpr std::size_t links = 4; // begin and end of direct and of memory cgroup reclaim
    ASSERT_TRUE(tool.wait_until_attached(links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    const auto expected = traced_reclaims(trace.take_lines());
    ASSERT_FALSE(expected.empty()) << "the kernel traced no reclaim in the child";
    std::vector<Reclaim> reported;
    std::uint64_t pages = 0;
    const auto& lines = tool.lines();
    ASSERT_EQ(lines.back(), "{\"type\":\"lost\",\"lost_events\":0}");
    for (std::size_t i = 0; i + 1 < lines.size(); i++) {
        auto e = tpkit::live::parse_flat_json(lines[i]);
        reported.emplace_back(e["kind"], e["pages"]);
        pages += std::stoull(e["pages"]);
        EXPECT_EQ(e["pid"], pid) << lines[i];
        EXPECT_EQ(e["tid"], pid) << lines[i];
        EXPECT_EQ(e["comm"], "tpk-reclaim") << lines[i];
        EXPECT_GT(std::stoull(e["latency_ns"]), 0u) << lines[i];
        if (extended)
            EXPECT_GT(std::stoull(e["free_kb"]), 0u) << lines[i]; // the machine's free memory
        else
            EXPECT_EQ(e["free_kb"], "null") << lines[i];
    }
    EXPECT_EQ(reported, expected) << fmt::format("{}", fmt::join(lines, "\n"));
    EXPECT_GT(pages, 0u) << "the lazily freed pages were not reclaimed";
}

TEST(DrsnoopExact, ExtendedSaysWhyWhereTheKernelHidesFreeMemory)
{
    TPKIT_REQUIRE_LIVE();
    if (tpkit::kernel_symbol_address("vm_zone_stat").has_value())
        GTEST_SKIP() << "this kernel lists vm_zone_stat: -e is checked by the test above";
    ToolRun tool({tpkit::live::tool_path("drsnoop"), "-e"});
    EXPECT_EQ(tool.wait(tpkit::live::patient(20s)), 4);
    EXPECT_EQ(tool.stderr_text(), "drsnoop: -e reads vm_zone_stat, which /proc/kallsyms does not "
                                  "list on this kernel (built without CONFIG_KALLSYMS_ALL)\n");
}
