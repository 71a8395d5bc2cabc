// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// mountsnoop: every mount, umount, fsopen, fsconfig, fsmount and move_mount call, with its
// arguments (flags by name) and what it returned, from the syscalls' tracepoints.
#include <tpkit/tools/mountsnoop.h>
#include "mountsnoop.skel.h"

#include <tpkit/kernel/constants.hpp>
#include <tpkit/kernel/syscalls.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/format.h>

#include <fcntl.h>

namespace {

constexpr const char* examples = R"(  mountsnoop                # every mount-family call, with its result
  mountsnoop -p 1216        # only calls made by PID 1216
  mountsnoop -x             # only failed calls
  mountsnoop -T             # seconds since start instead of the time of day
  mountsnoop --json | jq .  # one JSON object per call
)";

using Event = mountsnoop_event;

// The call's string `index` (its arguments' order), where the event has it.
struct StringArg {
    enum class Kind { null, unreadable, text } kind;
    std::string_view text;
    bool cut = false; // longer than the event holds
};

StringArg string_arg(const Event& e, int index)
{
    std::size_t offset = 0;
    for (int i = 0; i < index; i++)
        if (e.string_len[i] > 0)
            offset += e.string_len[i];
    std::int32_t len = e.string_len[index];
    if (len == 0)
        return {StringArg::Kind::null, {}};
    if (len < 0 || offset + len > sizeof(e.strings))
        return {StringArg::Kind::unreadable, {}};
    return {StringArg::Kind::text, {e.strings + offset, std::size_t(len) - 1},
            (e.strings_cut >> index & 1) != 0};
}

// As strace shows it: NULL, or quoted with quotes, backslashes and control bytes escaped (a path
// may hold a newline) and "..." after a cut one; "?" when the string could not be read.
std::string quoted(const Event& e, int index)
{
    StringArg arg = string_arg(e, index);
    if (arg.kind == StringArg::Kind::null)
        return "NULL";
    if (arg.kind == StringArg::Kind::unreadable)
        return "?";
    std::string out = "\"";
    for (unsigned char c : arg.text) {
        if (c == '"' || c == '\\')
            out += {'\\', char(c)};
        else if (c < 0x20 || c == 0x7f)
            out += fmt::format("\\x{:02x}", c);
        else
            out += char(c);
    }
    return out + (arg.cut ? "\"..." : "\"");
}

tpkit::Value text_arg(const Event& e, int index)
{
    StringArg arg = string_arg(e, index);
    return tpkit::cut_text(arg.text, arg.cut);
}

std::string fd_text(std::int32_t fd) { return fd == AT_FDCWD ? "AT_FDCWD" : std::to_string(fd); }

std::string result_text(std::int64_t ret)
{
    if (ret >= 0)
        return std::to_string(ret);
    auto name = tpkit::errno_name(int(-ret));
    return name ? fmt::format("-{}", *name) : std::to_string(ret);
}

std::string_view op_name(const Event& e)
{
    switch (e.op) {
    case MOUNTSNOOP_MOUNT: return "mount";
    case MOUNTSNOOP_UMOUNT: return "umount";
    case MOUNTSNOOP_FSOPEN: return "fsopen";
    case MOUNTSNOOP_FSCONFIG: return "fsconfig";
    case MOUNTSNOOP_FSMOUNT: return "fsmount";
    case MOUNTSNOOP_MOVE_MOUNT: return "move_mount";
    default: return "?";
    }
}

// The whole call as strace would write it: name(arguments) = result.
std::string call_text(const Event& e)
{
    using tpkit::flag_names;
    std::string args;
    switch (e.op) {
    case MOUNTSNOOP_MOUNT:
        args = fmt::format("{}, {}, {}, {}, {}", quoted(e, 0), quoted(e, 1), quoted(e, 2),
                           flag_names(tpkit::mount_flags(), e.flags), quoted(e, 3));
        break;
    case MOUNTSNOOP_UMOUNT:
        args = fmt::format("{}, {}", quoted(e, 0), flag_names(tpkit::umount_flags(), e.flags));
        break;
    case MOUNTSNOOP_FSOPEN:
        args = fmt::format("{}, {}", quoted(e, 0), flag_names(tpkit::fsopen_flags(), e.flags));
        break;
    case MOUNTSNOOP_FSCONFIG: {
        auto cmd = tpkit::constant_name(tpkit::fsconfig_commands(), e.cmd);
        args = fmt::format("{}, {}, {}, {}, {}", e.fd, cmd ? std::string(*cmd) : std::to_string(e.cmd),
                           quoted(e, 0), quoted(e, 1), e.aux);
        break;
    }
    case MOUNTSNOOP_FSMOUNT:
        args = fmt::format("{}, {}, {}", e.fd, flag_names(tpkit::fsmount_flags(), e.flags),
                           flag_names(tpkit::mount_attr_flags(), e.attr_flags));
        break;
    case MOUNTSNOOP_MOVE_MOUNT:
        args = fmt::format("{}, {}, {}, {}, {}", fd_text(e.fd), quoted(e, 0), fd_text(e.to_fd),
                           quoted(e, 1), flag_names(tpkit::move_mount_flags(), e.flags));
        break;
    }
    return fmt::format("{}({}) = {}", op_name(e), args, result_text(e.ret));
}

// JSON's source, target, fstype and data: the call's strings by their role.
tpkit::Value source_of(const Event& e)
{
    if (e.op == MOUNTSNOOP_MOUNT || e.op == MOUNTSNOOP_MOVE_MOUNT)
        return text_arg(e, 0);
    return "";
}

tpkit::Value target_of(const Event& e)
{
    if (e.op == MOUNTSNOOP_UMOUNT)
        return text_arg(e, 0);
    if (e.op == MOUNTSNOOP_MOUNT || e.op == MOUNTSNOOP_MOVE_MOUNT)
        return text_arg(e, 1);
    return "";
}

tpkit::Value fstype_of(const Event& e)
{
    if (e.op == MOUNTSNOOP_FSOPEN)
        return text_arg(e, 0);
    if (e.op == MOUNTSNOOP_MOUNT)
        return text_arg(e, 2);
    return "";
}

// mount's data, or one fsconfig option as mount's data would hold it: key or key=value.
tpkit::Value data_of(const Event& e)
{
    if (e.op == MOUNTSNOOP_MOUNT)
        return text_arg(e, 3);
    if (e.op != MOUNTSNOOP_FSCONFIG || string_arg(e, 0).kind != StringArg::Kind::text)
        return "";
    if (string_arg(e, 1).kind != StringArg::Kind::text)
        return text_arg(e, 0);
    return fmt::format("{}={}", string_arg(e, 0).text, string_arg(e, 1).text);
}

const tpkit::Columns<Event> columns{{
    tpkit::task_time_column<Event>(),
    tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
    tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::right),
    tpkit::task_column<Event>(tpkit::TaskField::tid, "TID", 7, tpkit::Align::right),
    {"MNT_NS", "mnt_ns", 11, tpkit::Align::right,
     [](const Event& e) -> tpkit::Value { return e.mnt_ns; }},
    {"CALL", "call", 0, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return call_text(e); }},
    tpkit::json_column<Event>("op", [](const Event& e) -> tpkit::Value { return op_name(e); }),
    tpkit::json_column<Event>("source", source_of),
    tpkit::json_column<Event>("target", target_of),
    tpkit::json_column<Event>("fstype", fstype_of),
    tpkit::json_column<Event>("data", data_of),
    tpkit::json_column<Event>("flags", [](const Event& e) -> tpkit::Value { return e.flags; }),
    tpkit::json_column<Event>("ret", [](const Event& e) -> tpkit::Value { return e.ret; }),
    tpkit::json_column<Event>("latency_ns", [](const Event& e) -> tpkit::Value { return e.latency_ns; }),
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("mountsnoop",
                   "Trace mount, umount, fsopen, fsconfig, fsmount and move_mount calls.", examples);
    bool failed_only = false;
    cli.add_common();
    cli.add_streaming();
    cli.flag("-x,--failed", failed_only, "only failed calls");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<mountsnoop_bpf, Event>(
            cli, columns, [&](mountsnoop_bpf& skel) { skel.rodata->failed_only = failed_only; });
    });
}
