// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// runqslower: every run-queue wait longer than a threshold, as it ends; bcc's runqslower.
#include <tpkit/tools/runqslower.h>
#include "runqslower.skel.h"

#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  runqslower                # waits longer than 10000 us (the default)
  runqslower 1000           # waits longer than 1000 us
  runqslower -p 123         # only the waits of process 123
  runqslower -t 123         # only the waits of thread 123
  runqslower -P             # also the task that ran before each one
  runqslower --json | jq .  # one JSON object per wait
)";

using Event = runqslower_event;
using tpkit::Align;
using tpkit::Value;

// Microseconds in text, as bcc's; the exact nanoseconds in JSON, as every duration there.
Value latency_us(const Event& e)
{
    return tpkit::TextAndJson{std::to_string(e.latency_ns / 1000), std::to_string(e.latency_ns)};
}
Value prev_comm_of(const Event& e) { return tpkit::text_of(e.prev_comm); }
Value prev_tid_of(const Event& e) { return e.prev_tid; }

// bcc's columns: TIME COMM TID LAT(us), then with -P PREV COMM and PREV TID.
const tpkit::Columns<Event> columns{{
    tpkit::task_time_column<Event>(),
    tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, Align::left),
    tpkit::json_column<Event>("pid", [](const Event& e) -> tpkit::Value { return e.task.pid; }),
    tpkit::task_column<Event>(tpkit::TaskField::tid, "TID", 6, Align::left),
    {"LAT(us)", "latency_ns", 14, Align::right, latency_us},
}};
const tpkit::Columns<Event> columns_with_previous{{
    tpkit::task_time_column<Event>(),
    tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, Align::left),
    tpkit::json_column<Event>("pid", [](const Event& e) -> tpkit::Value { return e.task.pid; }),
    tpkit::task_column<Event>(tpkit::TaskField::tid, "TID", 6, Align::left),
    {"LAT(us)", "latency_ns", 14, Align::right, latency_us},
    {"PREV COMM", "prev_comm", 16, Align::left, prev_comm_of},
    {"PREV TID", "prev_tid", 0, Align::left, prev_tid_of},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("runqslower",
                   "Trace run-queue (scheduler) waits longer than MIN_US: one line per wait, as the "
                   "task that waited is switched in.\n-p, -t, -u, --cgroup and --comm select the "
                   "task that waits, not the one that wakes it.",
                   examples);
    std::uint64_t min_us = 10000;
    bool previous = false;
    cli.add_common();
    cli.add_streaming();
    cli.option("min_us", min_us, "only waits longer than this many microseconds (10000)")
        .range(std::uint64_t(1), std::uint64_t(1) << 40);
    cli.flag("-P,--previous", previous, "also show the task switched out for it");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<runqslower_bpf, Event>(
            cli, previous ? columns_with_previous : columns,
            [&](runqslower_bpf& skel) { skel.rodata->min_us = min_us; });
    });
}
