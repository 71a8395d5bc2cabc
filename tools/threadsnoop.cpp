// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// threadsnoop: every new thread as it is created, from task:task_newtask; bcc's threadsnoop.
#include <tpkit/tools/threadsnoop.h>
#include "threadsnoop.skel.h"

#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  threadsnoop               # every new thread
  threadsnoop -p 181        # only threads created by process 181
  threadsnoop --comm java   # only threads created by tasks named java
  threadsnoop -T            # with seconds since the start
  threadsnoop --json | jq . # one JSON object per new thread
)";

using Event = threadsnoop_event;

const tpkit::Columns<Event> columns{{
    tpkit::task_time_column<Event>(),
    tpkit::json_column<Event>("cpu", [](const Event& e) -> tpkit::Value { return e.task.cpu; }),
    tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::right),
    tpkit::task_column<Event>(tpkit::TaskField::tid, "TID", 7, tpkit::Align::right),
    tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
    {"NEWTID", "child_tid", 0, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return e.new_tid; }},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("threadsnoop",
                   "Trace every new thread: the process and thread that created it, and its "
                   "thread ID.\n-p, -t, -u, --cgroup and --comm select the creating thread.",
                   examples);
    cli.add_common();
    cli.add_streaming();
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] { tpkit::run_stream<threadsnoop_bpf, Event>(cli, columns); });
}
