// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// exitsnoop: every process exit with its age and how it ended, from sched:sched_process_exit.
#include <tpkit/tools/exitsnoop.h>
#include "exitsnoop.skel.h"

#include <tpkit/process/signals.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <algorithm>

namespace {

constexpr const char* examples = R"(  exitsnoop                 # every process exit
  exitsnoop -x              # only those that failed: a non-zero code or a signal
  exitsnoop -p 181          # only process 181's exit
  exitsnoop -T              # every thread's exit
  exitsnoop --json | jq .   # one JSON object per exit
)";

using Event = exitsnoop_event;

const tpkit::Columns<Event> columns{{
    tpkit::task_time_column<Event>(),
    {"PCOMM", "pcomm", 16, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.task.comm); }},
    tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::right),
    {"PPID", "ppid", 7, tpkit::Align::right, [](const Event& e) -> tpkit::Value { return e.ppid; }},
    tpkit::task_column<Event>(tpkit::TaskField::tid, "TID", 7, tpkit::Align::right),
    tpkit::seconds_column<Event>("AGE(s)", "age_ns", 7, [](const Event& e) -> tpkit::Value {
        return e.task.timestamp_ns - std::min(e.start_ns, e.task.timestamp_ns);
    }),
    {"EXIT_CODE", "exit_code", 0, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::exit_status_text(e.status); }},
    // The status's parts as numbers, for JSON readers.
    tpkit::json_column<Event>("code", [](const Event& e) -> tpkit::Value { return (e.status & 0x7f) ? 0u : (e.status >> 8) & 0xff; }),
    tpkit::json_column<Event>("signal", [](const Event& e) -> tpkit::Value { return e.status & 0x7f; }),
    tpkit::json_column<Event>("core_dumped", [](const Event& e) -> tpkit::Value { return (e.status & 0x80) ? 1u : 0u; }),
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("exitsnoop", "Trace process exits: how old each process was and how it ended.",
                   examples);
    bool failed_only = false, threaded = false;
    cli.add_common();
    cli.add_streaming();
    cli.flag("-x,--failed", failed_only, "only exits with a non-zero code or by a signal");
    cli.flag("-T,--threaded,--threads,--per-thread", threaded,
             "every thread's exit, not only the process's (its last thread's)");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<exitsnoop_bpf, Event>(cli, columns, [&](exitsnoop_bpf& skel) {
            skel.rodata->threaded = threaded;
            skel.rodata->failed_only = failed_only;
        });
    });
}
