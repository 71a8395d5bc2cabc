// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// syncsnoop: every sync, syncfs, fsync, fdatasync, msync and sync_file_range call, with its
// arguments, from the syscalls' enter tracepoints.
#include <tpkit/tools/syncsnoop.h>
#include "syncsnoop.skel.h"

#include <tpkit/kernel/constants.hpp>
#include <tpkit/kernel/syscalls.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/format.h>

#include <sys/syscall.h>

namespace {

constexpr const char* examples = R"(  syncsnoop                 # every sync-family call
  syncsnoop -p 181          # only calls made by PID 181
  syncsnoop --comm postgres # only calls made by tasks named postgres
  syncsnoop --json | jq .   # one JSON object per call
)";

using Event = syncsnoop_event;

// The call's arguments as name=value, flags by name.
std::string args_of(const Event& e)
{
    switch (e.syscall_nr) {
    case SYS_syncfs:
    case SYS_fsync:
    case SYS_fdatasync:
        return fmt::format("fd={}", e.fd);
    case SYS_msync:
        return fmt::format("addr={:#x} len={} flags={}", e.offset, e.nbytes,
                           tpkit::flag_names(tpkit::msync_flags(), e.flags));
    case SYS_sync_file_range:
        return fmt::format("fd={} offset={} nbytes={} flags={}", e.fd, e.offset, e.nbytes,
                           tpkit::flag_names(tpkit::sync_file_range_flags(), e.flags));
    default:
        return "";
    }
}

const tpkit::Columns<Event> columns{{
    tpkit::task_time_column<Event>(),
    tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
    tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::right),
    tpkit::json_column<Event>("tid", [](const Event& e) -> tpkit::Value { return e.task.tid; }),
    {"CALL", "call", 16, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::syscall_text(e.syscall_nr); }},
    tpkit::json_column<Event>("fd", [](const Event& e) -> tpkit::Value { return e.fd; }),
    {"ARGS", "call_args", 0, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return args_of(e); }},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("syncsnoop",
                   "Trace sync, syncfs, fsync, fdatasync, msync and sync_file_range calls.",
                   examples);
    cli.add_common();
    cli.add_streaming();
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<syncsnoop_bpf, Event>(cli, columns);
    });
}
