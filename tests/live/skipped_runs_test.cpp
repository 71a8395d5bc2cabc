// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Runs of a tool's programs that the kernel skipped are reported, exactly as the kernel counted
// them. The test's own classic tracepoint program (tests/bpf/kit_nested.bpf.c) fires
// bpf_trace:bpf_trace_printk at each getppid() of this thread; a tool's classic program on that
// event is then skipped every time (another BPF program runs on the CPU). The tool must show
// none of those events and report as many skipped runs as the kernel counted in its programs'
// recursion_misses, read from /proc/PID/fdinfo while it still runs: on stderr, and in its JSON
// `lost` line. A raw tracepoint program on the same event is not skipped: count_printk sees
// every one (the reason the one-purpose tools attach raw tracepoints where they can).
// Kernels that do not count skipped runs of classic tracepoint programs (the count stays 0) are
// reported as such, with the tool's report still equal to it.
#include "live.hpp"
#include "tool_run.hpp"

#include "kit_nested.skel.h"

#include "tpkit/bpf/program_stats.hpp"
#include "tpkit/kernel/tracefs.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int nested_printks = 50;
const std::string event = "bpf_trace:bpf_trace_printk";

// Loading a program that calls bpf_printk() turns the event on in tracefs' top instance (the
// kernel's own trace of bpf_printk()); the state before the test is restored.
class TopInstanceEvent {
public:
    TopInstanceEvent() : path_(tpkit::tracefs_root() / "events/bpf_trace/bpf_trace_printk/enable")
    {
        std::ifstream(path_) >> was_;
    }
    ~TopInstanceEvent() { std::ofstream(path_) << was_; }

private:
    std::filesystem::path path_;
    std::string was_ = "0";
};

struct NestedRuns {
    std::uint64_t raw_seen = 0;       // the raw tracepoint program's count: never skipped
    std::uint64_t kernel_skipped = 0; // the tool's programs' recursion_misses, as the kernel has them
};

// Runs nested_printks getppid() calls under the nesting program while `tool` is attached.
NestedRuns nest_under(const tpkit::live::ToolRun& tool)
{
    TopInstanceEvent restore;
    std::unique_ptr<kit_nested_bpf, void (*)(kit_nested_bpf*)> skel(kit_nested_bpf::open(), &kit_nested_bpf::destroy);
    NestedRuns runs;
    if (!skel) {
        ADD_FAILURE() << "cannot open kit_nested";
        return runs;
    }
    skel->rodata->nested_tid = static_cast<std::uint32_t>(gettid());
    if (kit_nested_bpf::load(skel.get()) != 0 || kit_nested_bpf::attach(skel.get()) != 0) {
        ADD_FAILURE() << "cannot load or attach kit_nested";
        return runs;
    }
    for (int i = 0; i < nested_printks; i++)
        syscall(SYS_getppid);
    runs.raw_seen = skel->bss->raw_printks;
    skel.reset(); // detached: nothing nests any more
    runs.kernel_skipped = tpkit::process_recursion_misses(std::to_string(tool.pid()));
    return runs;
}

// What the tool reported at its end: the `recursion` of its JSON lost lines, summed.
std::uint64_t reported_skipped(const tpkit::live::ToolRun& tool)
{
    std::uint64_t skipped = 0;
    for (const std::string& line : tool.lines())
        if (auto e = tpkit::live::parse_flat_json(line); e["type"] == "lost" && e.count("recursion"))
            skipped += std::stoull(e["recursion"]);
    return skipped;
}

void expect_skips_reported(const tpkit::live::ToolRun& tool, const NestedRuns& runs, std::uint64_t reported)
{
    // Said in the log, which kernels count what (tests/kernels/README.md).
    std::printf("the kernel counted %llu skipped runs of the tool's programs for %d nested events\n",
                static_cast<unsigned long long>(runs.kernel_skipped), nested_printks);
    EXPECT_EQ(runs.raw_seen, std::uint64_t(nested_printks));
    EXPECT_EQ(reported, runs.kernel_skipped) << tool.stderr_text();
    if (runs.kernel_skipped == 0) {
        ::testing::Test::RecordProperty("kernel", "does not count skipped runs of classic tracepoint programs");
        EXPECT_EQ(tool.stderr_text().find("skipped by the kernel"), std::string::npos);
    } else {
        // Every nested run, and any other the kernel skipped meanwhile.
        EXPECT_GE(runs.kernel_skipped, std::uint64_t(nested_printks));
        EXPECT_NE(tool.stderr_text().find(std::to_string(reported) + " runs of its BPF programs skipped by the kernel"),
                  std::string::npos)
            << tool.stderr_text();
    }
}

} // namespace

// A streaming tool: no event of this thread, and the skips in its closing lost line.
TEST(SkippedRunsExact, AStreamingToolReportsWhatTheKernelSkipped)
{
    TPKIT_REQUIRE_LIVE();
    constexpr std::size_t links = 1; // the event's
    auto tool = tpkit::live::attached_json_tool("tpsnoop", {event, "-t", std::to_string(gettid())}, links);
    const NestedRuns runs = nest_under(*tool);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    for (const std::string& line : tool->lines())
        EXPECT_NE(tpkit::live::parse_flat_json(line)["type"], "event") << line;
    expect_skips_reported(*tool, runs, reported_skipped(*tool));
}

// An aggregating tool: no count for the event, the skips in a lost line after its print.
TEST(SkippedRunsExact, AnAggregatingToolReportsWhatTheKernelSkipped)
{
    TPKIT_REQUIRE_LIVE();
    constexpr std::size_t links = 1; // the event's
    auto tool = tpkit::live::attached_json_tool("tpcount", {event, "-t", std::to_string(gettid())}, links);
    const NestedRuns runs = nest_under(*tool);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    for (const std::string& line : tool->lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (e["type"] == "count") {
            EXPECT_EQ(e["count"], "0") << line;
        }
    }
    expect_skips_reported(*tool, runs, reported_skipped(*tool));
}
