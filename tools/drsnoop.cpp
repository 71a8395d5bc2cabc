// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// drsnoop: every direct reclaim stall, with its latency and the pages it freed; bcc's drsnoop,
// with memory cgroup reclaim too.
#include <tpkit/tools/drsnoop.h>
#include "drsnoop.skel.h"

#include <tpkit/kernel/symbols.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <unistd.h>

namespace {

constexpr const char* examples = R"(  drsnoop                   # every direct reclaim
  drsnoop -p 181            # only those of process 181
  drsnoop -t 181            # only those of thread 181
  drsnoop -e                # with the machine's free memory when each ended
  drsnoop --json | jq .     # one JSON object per reclaim
)";

using Event = drsnoop_event;
using tpkit::Align;
using tpkit::Value;

Value free_kb(const Event& e)
{
    static const std::uint64_t page_kb = std::uint64_t(sysconf(_SC_PAGESIZE)) / 1024;
    return e.nr_free_pages * page_kb;
}

// bcc's columns: TIME COMM TID LAT(ms) PAGES, FREE(KB) with -e; then which reclaim it was.
tpkit::Columns<Event> columns(bool extended)
{
    return {
        tpkit::task_time_column<Event>(),
        tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
        tpkit::json_column<Event>("pid", [](const Event& e) -> tpkit::Value { return e.task.pid; }),
        tpkit::task_column<Event>(tpkit::TaskField::tid, "TID", 6, tpkit::Align::left),
        {"LAT(ms)", "latency_ns", 8, Align::right,
         [](const Event& e) { return tpkit::milliseconds_value(e.latency_ns, 3); }},
        {"PAGES", "pages", 5, Align::right, [](const Event& e) -> Value { return e.nr_reclaimed; }},
        tpkit::json_only_unless<Event>(extended, {"FREE(KB)", "free_kb", 8, Align::right,
         extended ? free_kb : [](const Event&) -> Value { return tpkit::absent; }}),
        {"KIND", "kind", 0, Align::left,
         [](const Event& e) -> Value { return e.kind == DRSNOOP_MEMCG ? "memcg" : "direct"; }},
    };
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("drsnoop",
                   "Trace direct reclaim: every time a task stalls to free memory, because the "
                   "machine (KIND direct) or its memory cgroup (KIND memcg) ran short, with the "
                   "latency and the pages reclaimed.",
                   examples);
    bool extended = false;
    cli.add_common();
    cli.add_streaming();
    cli.flag("-e,--extended", extended, "also the machine's free memory (FREE(KB))");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        std::uint64_t vm_zone_stat = 0;
        if (extended) {
            auto address = tpkit::kernel_symbol_address("vm_zone_stat");
            if (!address)
                throw tpkit::Error(tpkit::Exit::unknown_target,
                                   "-e reads vm_zone_stat, which /proc/kallsyms does not list on "
                                   "this kernel (built without CONFIG_KALLSYMS_ALL)");
            if (!*address)
                throw tpkit::Error(tpkit::Exit::no_privileges,
                                   "/proc/kallsyms shows vm_zone_stat at 0 (kptr_restrict): -e needs "
                                   "root or CAP_SYSLOG");
            vm_zone_stat = *address;
        }
        tpkit::run_stream<drsnoop_bpf, Event>(cli, columns(extended), [&](drsnoop_bpf& skel) {
            skel.rodata->vm_zone_stat_address = vm_zone_stat;
        });
    });
}
