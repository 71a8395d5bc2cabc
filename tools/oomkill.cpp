// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// oomkill: every OOM kill, from oom:mark_victim: who was killed, with its memory as the kernel
// recorded it, and which task ran the OOM killer.
#include <tpkit/tools/oomkill.h>
#include "oomkill.skel.h"

#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  oomkill                   # every OOM kill
  oomkill --comm postgres   # only kills triggered by tasks named postgres
  oomkill --json | jq .     # one JSON object per kill
)";

using Event = oomkill_event;

// A figure of the kernel's record, absent on kernels whose mark_victim has only the pid.
template <class Int>
tpkit::Value figure(const Event& e, Int value)
{
    if (!e.has_figures)
        return tpkit::absent;
    return value;
}

const tpkit::Columns<Event> columns{{
    tpkit::time_column<Event>([](const Event& e) -> tpkit::Value { return e.trigger.timestamp_ns; }),
    tpkit::json_column<Event>("cpu", [](const Event& e) -> tpkit::Value { return e.trigger.cpu; }),
    {"TPID", "trigger_pid", 7, tpkit::Align::right,
     [](const Event& e) -> tpkit::Value { return e.trigger.pid; }},
    tpkit::json_column<Event>("trigger_tid", [](const Event& e) -> tpkit::Value { return e.trigger.tid; }),
    {"TCOMM", "trigger_comm", 16, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.trigger.comm); }},
    {"KPID", "killed_pid", 7, tpkit::Align::right, [](const Event& e) -> tpkit::Value { return e.killed_pid; }},
    tpkit::json_column<Event>("killed_tid", [](const Event& e) -> tpkit::Value { return e.killed_tid; }),
    {"KCOMM", "killed_comm", 16, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.killed_comm); }},
    {"KUID", "killed_uid", 6, tpkit::Align::right,
     [](const Event& e) { return figure(e, e.killed_uid); }},
    {"TOTAL_VM_KB", "total_vm_kb", 11, tpkit::Align::right,
     [](const Event& e) { return figure(e, e.total_vm_kb); }},
    {"ANON_RSS_KB", "anon_rss_kb", 11, tpkit::Align::right,
     [](const Event& e) { return figure(e, e.anon_rss_kb); }},
    {"FILE_RSS_KB", "file_rss_kb", 11, tpkit::Align::right,
     [](const Event& e) { return figure(e, e.file_rss_kb); }},
    {"SHMEM_RSS_KB", "shmem_rss_kb", 12, tpkit::Align::right,
     [](const Event& e) { return figure(e, e.shmem_rss_kb); }},
    {"PGTABLES_KB", "pgtables_kb", 11, tpkit::Align::right,
     [](const Event& e) { return figure(e, e.pgtables_kb); }},
    {"OOM_SCORE_ADJ", "oom_score_adj", 0, tpkit::Align::right,
     [](const Event& e) { return figure(e, e.oom_score_adj); }},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("oomkill",
                   "Trace OOM kills: the victim, its memory, and the task that ran the OOM killer "
                   "(the task filters select that task).",
                   examples);
    cli.add_common();
    cli.add_streaming();
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<oomkill_bpf, Event>(cli, columns);
    });
}
