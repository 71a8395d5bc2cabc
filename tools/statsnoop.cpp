// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// statsnoop: every statfs, stat, lstat, newfstatat and statx with its path and result, from the
// syscalls' tracepoints.
#include <tpkit/tools/statsnoop.h>
#include "statsnoop.skel.h"

#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <cstring>

namespace {

constexpr const char* examples = R"(  statsnoop                 # every stat-family call
  statsnoop -x              # only failed ones
  statsnoop -p 1216         # only calls by PID 1216
  statsnoop -s              # the syscall's name too
  statsnoop --json | jq .   # one JSON object per call
)";

using Event = statsnoop_event;

tpkit::Value syscall_of(const Event& e)
{
    switch (e.call) {
    case STATSNOOP_STATFS: return "statfs";
    case STATSNOOP_NEWSTAT: return "newstat";
    case STATSNOOP_STATX: return "statx";
    case STATSNOOP_NEWFSTATAT: return "newfstatat";
    case STATSNOOP_NEWLSTAT: return "newlstat";
    default: return "?";
    }
}

tpkit::Value path_of(const Event& e)
{
    if (e.path_size == 0)
        return tpkit::absent; // unreadable
    std::size_t size = std::min<std::size_t>(e.path_size, sizeof(e.path));
    return tpkit::cut_text({e.path, strnlen(e.path, size)}, e.path_cut);
}

// RET and ERR as bcc shows them: 0 or -1, and the errno.
tpkit::Columns<Event> columns(bool print_syscall)
{
    return {
        tpkit::task_time_column<Event>(),
        tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::right),
        tpkit::json_column<Event>("tid", [](const Event& e) -> tpkit::Value { return e.task.tid; }),
        tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
        {"RET", "ret", 4, tpkit::Align::right,
         [](const Event& e) -> tpkit::Value { return e.ret >= 0 ? e.ret : -1; }},
        {"ERR", "err", 4, tpkit::Align::right,
         [](const Event& e) -> tpkit::Value { return e.ret >= 0 ? 0 : -e.ret; }},
        tpkit::json_only_unless<Event>(print_syscall, {"SYSCALL", "syscall", 10, tpkit::Align::left, syscall_of}),
        {"PATH", "path", 0, tpkit::Align::left, path_of},
        tpkit::json_column<Event>("path_cut", [](const Event& e) -> tpkit::Value { return e.path_cut; }),
        tpkit::json_column<Event>("dfd", [](const Event& e) -> tpkit::Value { return e.dfd; }),
        tpkit::json_column<Event>("flags", [](const Event& e) -> tpkit::Value { return e.flags; }),
    };
}

// stat() and lstat() are not on every architecture (arm64 has only newfstatat and statx).
void load_present_calls(statsnoop_bpf& skel)
{
    const char* what = "cannot choose statsnoop's programs";
    bool stat = tpkit::event_exists({"syscalls", "sys_enter_newstat"});
    bool lstat = tpkit::event_exists({"syscalls", "sys_enter_newlstat"});
    tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.newstat_entry, stat), what);
    tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.newstat_exit, stat), what);
    tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.newlstat_entry, lstat), what);
    tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.newlstat_exit, lstat), what);
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("statsnoop", "Trace statfs, stat, lstat, newfstatat and statx calls.", examples);
    bool failed = false, print_syscall = false;
    cli.add_common();
    cli.add_streaming();
    cli.flag("-x,--failed", failed, "only failed calls");
    cli.flag("-s,--sysname", print_syscall, "show a SYSCALL column");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<statsnoop_bpf, Event>(cli, columns(print_syscall), [&](statsnoop_bpf& skel) {
            skel.rodata->failed_only = failed;
            load_present_calls(skel);
        });
    });
}
