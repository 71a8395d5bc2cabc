// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// forksnoop: every fork as it happens, from sched:sched_process_fork.
#include <tpkit/tools/forksnoop.h>
#include "forksnoop.skel.h"

#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  forksnoop                 # every fork and thread creation
  forksnoop -p 181          # only forks made by PID 181
  forksnoop --comm bash     # only forks made by tasks named bash
  forksnoop --raw           # raw tracepoint, reading task_struct with CO-RE
  forksnoop --json | jq .   # one JSON object per fork
)";

using Event = forksnoop_event;

const tpkit::Columns<Event> columns{{
    tpkit::time_column<Event>([](const Event& e) -> tpkit::Value { return e.parent.timestamp_ns; }),
    tpkit::json_column<Event>("cpu", [](const Event& e) -> tpkit::Value { return e.parent.cpu; }),
    {"PCOMM", "parent_comm", 16, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.parent.comm); }},
    {"PPID", "parent_pid", 7, tpkit::Align::right, [](const Event& e) -> tpkit::Value { return e.parent.pid; }},
    tpkit::json_column<Event>("parent_tid", [](const Event& e) -> tpkit::Value { return e.parent.tid; }),
    {"COMM", "child_comm", 16, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.child_comm); }},
    {"PID", "child_pid", 7, tpkit::Align::right, [](const Event& e) -> tpkit::Value { return e.child_pid; }},
    {"TID", "child_tid", 7, tpkit::Align::right, [](const Event& e) -> tpkit::Value { return e.child_tid; }},
    {"KIND", "kind", 0, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return e.is_thread ? "thread" : "process"; }},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("forksnoop", "Trace every fork (new processes and threads).", examples);
    bool raw = false;
    cli.add_common();
    cli.add_streaming();
    cli.flag("--raw", raw,
             "attach a raw tracepoint and read the parent and child task_struct");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<forksnoop_bpf, Event>(cli, columns, [&](forksnoop_bpf& skel) {
            const char* what = "cannot choose forksnoop's programs";
            tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.fork_raw_tp, raw), what);
            tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.fork_tp, !raw), what);
        });
    });
}
