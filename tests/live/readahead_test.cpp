// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// readahead against the kernel's own trace of the same events: a child reads a loop device of a
// known size through its page cache (dropped first with POSIX_FADV_DONTNEED, so the read starts
// from nothing cached), and the tool's histograms of each readahead event, per file, hold
// exactly the values the kernel's trace of that child recorded. Where the kernel has no
// readahead tracepoints (6.12 and older), the tool says so in one line and exits 4.
#include "live.hpp"
#include "loop_device.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include <tpkit/kernel/tracefs.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::LoopDevice;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;
using tpkit::live::TraceInstance;

namespace {

constexpr std::size_t readahead_links = 4;
constexpr std::size_t ra_device_bytes = 8 << 20, ra_read_bytes = 64 << 10;
const char* const readahead_events[] = {"page_cache_sync_ra", "page_cache_async_ra", "page_cache_ra_order",
                              "page_cache_ra_unbounded"};

bool kernel_has_readahead_events()
{
    return tpkit::event_exists({"readahead", "page_cache_sync_ra"});
}

// The value each event's histogram counts, as the kernel's trace prints the record.
const char* readahead_field(const std::string& event)
{
    if (event == "page_cache_ra_order")
        return "size";
    if (event == "page_cache_ra_unbounded")
        return "nr_to_read";
    return "req_count";
}

// One traced_readahead record: its event, dev (MAJ:MIN), inode (decimal) and measured value.
struct TracedReadahead {
    std::string event, dev;
    std::uint64_t ino, value;
};

std::vector<TracedReadahead> traced_readahead(const std::vector<std::string>& lines)
{
    static const std::regex record(R"( (page_cache_\w+): dev=(\d+:\d+) ino=([0-9a-f]+) (.*))");
    std::vector<TracedReadahead> out;
    for (const auto& line : lines) {
        std::smatch m;
        if (!std::regex_search(line, m, record))
            continue;
        const std::string event = m[1], rest = m[4];
        std::smatch v;
        const std::regex value(fmt::format(R"((^| ){}=(\d+))", readahead_field(event)));
        if (std::regex_search(rest, v, value))
            out.push_back({event, m[2], std::stoull(m[3], nullptr, 16), std::stoull(v[2])});
    }
    return out;
}

} // namespace

TEST(ReadaheadExact, HistogramsHoldWhatTheKernelTraced)
{
    TPKIT_REQUIRE_LIVE();
    if (!kernel_has_readahead_events())
        GTEST_SKIP() << "no readahead tracepoints here (ReadaheadExact.ExitsFourWithoutTheTracepoints)";
    LoopDevice loop(ra_device_bytes);
    const std::string device = loop.path();
    ScriptedChild child("tpk-reader", {}, [device = device.c_str()] {
        int fd = open(device, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return 1;
        if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
            return 2;
        static char buf[ra_read_bytes];
        std::size_t total = 0;
        for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
            total += n;
        close(fd);
        return total == ra_device_bytes ? 0 : 3;
    });
    const std::string pid = std::to_string(child.pid());
    TraceInstance trace("readahead");
    for (const char* event : readahead_events) {
        ASSERT_EQ(trace.set_filter("readahead", event, "common_pid == " + pid), "");
        trace.enable("readahead", event, true);
    }
    ToolRun tool({tpkit::live::tool_path("readahead"), "--json", "--per-file", "-p", pid});
    ASSERT_TRUE(tool.wait_until_attached(readahead_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    for (const char* event : readahead_events)
        trace.enable("readahead", event, false);
    const auto records = traced_readahead(trace.take_lines());

    // The device's own page cache: the block device inode, on the bdev pseudo filesystem.
    std::map<std::string, std::uint64_t> traced_count;
    for (const auto& r : records)
        traced_count[r.event]++;
    ASSERT_GE(traced_count["page_cache_sync_ra"], 1u) << "no readahead from a fresh page cache";
    ASSERT_GE(traced_count["page_cache_async_ra"], 1u) << "a sequential read with no async readahead";

    // key → event → bucket low → count, from the tool; and the same from the trace, each value in
    // the tool's bucket that holds it.
    std::map<std::string, std::map<std::string, std::map<std::uint64_t, std::uint64_t>>> tool_hists, trace_hists;
    std::map<std::string, std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>>> ranges;
    const auto& lines = tool.lines();
    ASSERT_FALSE(lines.empty());
    for (const auto& line : lines) {
        auto h = nlohmann::json::parse(line);
        if (h["type"] != "hist")
            continue;
        const std::string event = h["event"].get<std::string>().substr(std::string("readahead:").size());
        const std::string key = fmt::format("{} {}", h["dev"].get<std::string>(), h["ino"].get<std::uint64_t>());
        EXPECT_EQ(h["field"], readahead_field(event)) << line;
        EXPECT_EQ(h["unit"], "pages") << line;
        for (const auto& b : h["buckets"]) {
            tool_hists[key][event][b["low"].get<std::uint64_t>()] += b["count"].get<std::uint64_t>();
            ranges[key][event].emplace_back(b["low"].get<std::uint64_t>(), b["high"].get<std::uint64_t>());
        }
    }
    for (const auto& r : records) {
        const std::string key = fmt::format("{} {}", r.dev, r.ino);
        std::uint64_t low = UINT64_MAX;
        for (const auto& [lo, hi] : ranges[key][r.event])
            if (lo <= r.value && r.value <= hi)
                low = lo;
        trace_hists[key][r.event][low]++; // UINT64_MAX: in no bucket of the tool's
    }
    for (auto& [key, by_event] : trace_hists)
        for (auto& [event, buckets] : by_event)
            for (auto it = buckets.begin(); it != buckets.end();)
                it = it->second ? std::next(it) : buckets.erase(it);
    EXPECT_EQ(tool_hists, trace_hists) << fmt::format("{}\n{}", fmt::join(lines, "\n"),
                                                      fmt::join(trace.lines(), "\n"));
    EXPECT_EQ(lines.back().find("{\"type\":\"lost\""), std::string::npos) << lines.back();
}

TEST(ReadaheadExact, ExitsFourWithoutTheTracepoints)
{
    TPKIT_REQUIRE_LIVE();
    if (kernel_has_readahead_events())
        GTEST_SKIP() << "this kernel has the readahead tracepoints";
    ToolRun tool({tpkit::live::tool_path("readahead")});
    EXPECT_EQ(tool.wait(20s), 4);
    EXPECT_EQ(tool.stderr_text(),
              "readahead: this kernel has no readahead:page_cache_sync_ra tracepoint (kernels "
              "newer than 6.12 have it)\n");
    EXPECT_TRUE(tool.lines().empty());
}
