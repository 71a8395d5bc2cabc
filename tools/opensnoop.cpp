// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// opensnoop: every open, openat and openat2 with its path, flags and result, from the syscalls'
// tracepoints.
#include <tpkit/tools/opensnoop.h>
#include "opensnoop.skel.h"

#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>
#include <tpkit/support/json.hpp>

#include <fmt/format.h>

#include <fcntl.h>

#include <cstring>
#include <vector>

namespace {

constexpr const char* examples = R"(  opensnoop                 # every open
  opensnoop -x              # only failed opens
  opensnoop -p 181          # only opens by PID 181
  opensnoop -t 123          # only opens by thread 123
  opensnoop -n main         # only processes whose name contains "main"
  opensnoop -e              # flags and mode too
  opensnoop -F              # relative paths after their directory
  opensnoop --json | jq .   # one JSON object per open
)";

using Event = opensnoop_event;

// Whether the flags use the mode: only files that open() may create do.
bool has_mode(const Event& e)
{
    return (e.flags & O_CREAT) || (e.flags & O_TMPFILE) == O_TMPFILE;
}

std::string_view path_text(const Event& e)
{
    return {e.strings, strnlen(e.strings, std::min<std::size_t>(e.path_size, sizeof(e.strings)))};
}

tpkit::Value path_of(const Event& e)
{
    if (e.path_size == 0)
        return tpkit::absent; // unreadable
    return tpkit::cut_text(path_text(e), e.path_cut);
}

// -F: a relative path after the directory it starts from, whose names the event holds
// innermost first; "…" where names are missing (before) or the path is cut (after).
tpkit::Value full_path_of(const Event& e)
{
    std::string_view path = path_text(e);
    if (e.path_size == 0 || path.empty() || path[0] == '/')
        return path_of(e);
    const std::size_t end = std::min<std::size_t>(std::size_t(e.path_size) + e.dir_size, sizeof(e.strings));
    std::vector<std::string_view> names;
    for (std::size_t at = e.path_size; names.size() < e.dir_names && at < end;) {
        names.emplace_back(e.strings + at, strnlen(e.strings + at, end - at));
        at += names.back().size() + 1;
    }
    std::string full;
    for (auto name = names.rbegin(); name != names.rend(); ++name)
        full += fmt::format("/{}", *name);
    full += fmt::format("/{}", path);
    std::string json;
    tpkit::append_json_string(json, full);
    return tpkit::TextAndJson{fmt::format("{}{}{}", e.dir_cut ? "…" : "", full, e.path_cut ? "…" : ""), json};
}

tpkit::Columns<Event> columns(bool print_uid, bool extended, bool full)
{
    return {
        tpkit::task_time_column<Event>(),
        tpkit::json_only_unless(print_uid, tpkit::task_column<Event>(tpkit::TaskField::uid, "UID", 7, tpkit::Align::left)),
        tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::right),
        tpkit::json_column<Event>("tid", [](const Event& e) -> tpkit::Value { return e.task.tid; }),
        tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
        {"FD", "fd", 3, tpkit::Align::right,
         [](const Event& e) -> tpkit::Value { return e.ret >= 0 ? e.ret : -1; }},
        {"ERR", "err", 3, tpkit::Align::right,
         [](const Event& e) -> tpkit::Value { return e.ret >= 0 ? 0 : -e.ret; }},
        tpkit::json_only_unless<Event>(extended, {"FLAGS", "flags", 8, tpkit::Align::left, [](const Event& e) -> tpkit::Value {
             return tpkit::TextAndJson{fmt::format("{:08o}", e.flags), std::to_string(e.flags)};
         }}),
        tpkit::json_only_unless<Event>(extended, {"MODE", "mode", 4, tpkit::Align::left, [](const Event& e) -> tpkit::Value {
             if (!has_mode(e))
                 return tpkit::TextAndJson{"n/a", "null"};
             return tpkit::TextAndJson{fmt::format("{:04o}", e.mode), std::to_string(e.mode)};
         }}),
        {"PATH", "path", 0, tpkit::Align::left, full ? full_path_of : path_of},
        tpkit::json_column<Event>("path_cut", [](const Event& e) -> tpkit::Value { return e.path_cut | e.dir_cut; }),
        tpkit::json_column<Event>("dfd", [](const Event& e) -> tpkit::Value { return e.dfd; }),
        tpkit::json_column<Event>("call", [](const Event& e) -> tpkit::Value {
             return e.call == OPENSNOOP_OPEN ? "open" : e.call == OPENSNOOP_OPENAT ? "openat" : "openat2";
         }),
    };
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("opensnoop", "Trace open, openat and openat2: every file opened, or not.", examples);
    bool failed = false, extended = false, print_uid = false, full = false;
    std::string name;
    cli.add_common();
    cli.add_streaming();
    cli.flag("-x,--failed", failed, "only failed opens");
    cli.flag("-e,--extended-fields", extended, "show FLAGS (octal) and MODE columns");
    cli.flag("-U,--print-uid", print_uid, "show a UID column");
    cli.option("-n,--name", name, "only processes whose name (comm) contains NAME");
    cli.flag("-F,--full-path", full, "relative paths after the directory they start from");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        // open() is not on every architecture (arm64 has only openat), openat2 only since 5.6.
        bool open = tpkit::event_exists({"syscalls", "sys_enter_open"});
        bool openat2 = tpkit::event_exists({"syscalls", "sys_enter_openat2"});
        tpkit::run_stream<opensnoop_bpf, Event>(
            cli, columns(print_uid, extended, full),
            [&](opensnoop_bpf& skel) {
                skel.rodata->failed_only = failed;
                skel.rodata->full_path = full;
                const char* what = "cannot choose opensnoop's programs";
                tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.open_entry, open), what);
                tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.open_exit, open), what);
                tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.openat2_entry, openat2), what);
                tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.openat2_exit, openat2), what);
            },
            [&](const Event& e) { return tpkit::text_of(e.task.comm).find(name) != std::string_view::npos; });
    });
}
