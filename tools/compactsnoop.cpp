// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// compactsnoop: every compaction run of a zone with its latency and result, from the raw
// tracepoints mm_compaction_begin and mm_compaction_end; bcc's compactsnoop.
#include <tpkit/tools/compactsnoop.h>
#include "compactsnoop.skel.h"

#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/run/stack_symbolizer.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr const char* examples = R"(  compactsnoop              # every compaction run
  compactsnoop -T           # with seconds since the start
  compactsnoop -e           # with the zone's watermarks and free pages
  compactsnoop -K           # with the kernel stack that compacted
  compactsnoop -p 181       # only runs in process 181
  compactsnoop --json       # one JSON object per run
)";

// A run as shown: the event and, with -K, its stack.
struct Run {
    compactsnoop_event event;
    std::vector<std::string> stack;
};

// The kernel's enum compact_result, as mm_compaction_end's print format names it on every
// kernel that has the tracepoint.
std::string status_name(std::int32_t status)
{
    static const char* const names[] = {"not_suitable_zone", "skipped", "deferred",
                                        "no_suitable_page",  "continue", "complete",
                                        "partial_skipped",   "contended", "success"};
    if (status >= 0 && status < std::int32_t(std::size(names)))
        return names[status];
    return std::to_string(status);
}

// bcc's zone names: ZONE_ and the kernel's name in capitals (ZONE_DMA32, ZONE_NORMAL).
std::string zone_text(const compactsnoop_event& e)
{
    std::string name = "ZONE_";
    for (char c : tpkit::text_of(e.zone))
        name += char(std::toupper(static_cast<unsigned char>(c)));
    return name;
}

// bcc's MODE: SYNC unless the run was asynchronous (MIGRATE_ASYNC, 0); JSON has the kernel's mode.
tpkit::Value mode_value(const compactsnoop_event& e)
{
    static const char* const modes[] = {"async", "sync_light", "sync"};
    std::string json = e.mode < std::size(modes) ? fmt::format("\"{}\"", modes[e.mode]) : std::to_string(e.mode);
    return tpkit::TextAndJson{e.mode == 0 ? "ASYNC" : "SYNC", json};
}

// bcc's columns, TIME first as in every tpkit tool; -e adds the zone's watermarks and free pages
// (not FRAGIDX: see compactsnoop(8)); with -K the stack follows the row in text, one frame a
// line, and is "kernel_stack" in JSON.
tpkit::Columns<Run> columns(bool extended, bool stacks)
{
    std::vector<tpkit::Column<Run>> list{
        tpkit::time_column<Run>([](const Run& r) -> tpkit::Value { return r.event.task.timestamp_ns; }),
        {"COMM", "comm", 16, tpkit::Align::left, [](const Run& r) -> tpkit::Value { return tpkit::text_of(r.event.task.comm); }},
        {"PID", "pid", 7, tpkit::Align::left, [](const Run& r) -> tpkit::Value { return r.event.task.pid; }},
        tpkit::json_column<Run>("tid", [](const Run& r) -> tpkit::Value { return r.event.task.tid; }),
        tpkit::json_column<Run>("cpu", [](const Run& r) -> tpkit::Value { return r.event.task.cpu; }),
        {"NODE", "node", 4, tpkit::Align::left, [](const Run& r) -> tpkit::Value { return r.event.node; }},
        {"ZONE", "", 12, tpkit::Align::left, [](const Run& r) -> tpkit::Value { return zone_text(r.event); }},
        tpkit::json_column<Run>("zone", [](const Run& r) -> tpkit::Value { return tpkit::text_of(r.event.zone); }),
        tpkit::json_column<Run>("zone_index", [](const Run& r) -> tpkit::Value { return r.event.zone_index; }),
        {"ORDER", "order", 5, tpkit::Align::left, [](const Run& r) -> tpkit::Value { return r.event.order; }},
        {"MODE", "compact_mode", 7, tpkit::Align::left, [](const Run& r) { return mode_value(r.event); }},
    };
    if (extended) {
        list.push_back({"MIN", "min_pages", 8, tpkit::Align::left, [](const Run& r) -> tpkit::Value { return r.event.min_pages; }});
        list.push_back({"LOW", "low_pages", 8, tpkit::Align::left, [](const Run& r) -> tpkit::Value { return r.event.low_pages; }});
        list.push_back({"HIGH", "high_pages", 8, tpkit::Align::left, [](const Run& r) -> tpkit::Value { return r.event.high_pages; }});
        list.push_back({"FREE", "free_pages", 8, tpkit::Align::left, [](const Run& r) -> tpkit::Value { return r.event.free_pages; }});
    }
    list.push_back({"LAT(ms)", "latency_ns", 9, tpkit::Align::right,
                    [](const Run& r) { return tpkit::milliseconds_value(r.event.latency_ns, 3); }});
    list.push_back({"STATUS", "status", 16, tpkit::Align::right,
                    [](const Run& r) -> tpkit::Value { return status_name(r.event.status); }});
    if (stacks)
        list.push_back(tpkit::json_column<Run>("kernel_stack", [](const Run& r) -> tpkit::Value {
            return tpkit::TextAndJson{"", tpkit::json_string_array(r.stack)};
        }));
    return tpkit::Columns<Run>(std::move(list));
}

struct Options {
    bool extended = false, stacks = false, offsets = false;
    std::uint32_t stack_storage = 1024;
};

void run(const tpkit::Cli& cli, const Options& o)
{
    // From the kernel's BTF, as the raw tracepoints need no tracefs.
    if (!tpkit::kernel_has_raw_tracepoint("mm_compaction_begin"))
        throw tpkit::Error(tpkit::Exit::unknown_target,
                           "this kernel has no compaction:mm_compaction_begin tracepoint (kernels "
                           "built with CONFIG_COMPACTION have it)");
    const tpkit::CommonOptions& options = cli.options();
    const tpkit::Columns<Run> shown = columns(o.extended, o.stacks);
    tpkit::Output& out = tpkit::standard_output();
    tpkit::MonotonicClock clock;
    std::optional<tpkit::StackSymbolizer> symbolizer;
    bpf_map* stack_map = nullptr;
    tpkit::run_stream<compactsnoop_bpf, compactsnoop_event>(
        cli,
        [&](const compactsnoop_event& e) {
            Run run{e, {}};
            if (symbolizer)
                run.stack = symbolizer->kernel(e.kernel_stack_id);
            shown.row(run, options, clock, out);
            if (o.stacks && !options.json) {
                for (const auto& frame : run.stack)
                    out.print("\t{}\n", frame);
                out.append("\n");
            }
        },
        [&](compactsnoop_bpf& skel) {
            skel.rodata->kernel_stacks = o.stacks;
            stack_map = skel.maps.stacks;
            // Without -K the map holds nothing: the smallest there is.
            tpkit::check_libbpf(bpf_map__set_max_entries(skel.maps.stacks, o.stacks ? o.stack_storage : 1),
                                "cannot size the stack map");
        },
        [&] {
            if (o.stacks) {
                symbolizer.emplace(bpf_map__fd(stack_map), COMPACTSNOOP_MAX_STACK_DEPTH,
                                   COMPACTSNOOP_NO_STACK, o.offsets);
                symbolizer->load_kernel_symbols();
            }
            shown.header(options, out);
        },
        [&] {
            if (symbolizer)
                symbolizer->report_missed("compactsnoop");
        });
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("compactsnoop",
                   "Trace every compaction run of a zone: the task, node, zone, order and mode, "
                   "its latency and its result.\n-p, -t, -u, --cgroup and --comm select the "
                   "compacting task.",
                   examples);
    Options o;
    cli.add_common();
    cli.add_streaming();
    cli.flag("-e,--extended-fields", o.extended,
             "also the zone's watermarks (MIN, LOW, HIGH) and free pages when the run began");
    cli.flag("-K,--kernel-stack", o.stacks, "show the kernel stack that compacted, after each run");
    cli.flag("--offsets", o.offsets, "with -K, show each frame's offset in its function");
    cli.option("--stack-storage-size", o.stack_storage, "with -K, distinct stacks kept (default 1024)")
        .range(1u, 1u << 20);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] { run(cli, o); });
}
