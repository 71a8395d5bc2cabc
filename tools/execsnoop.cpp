// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// execsnoop: every execve and execveat with its arguments and result, from the syscalls'
// tracepoints.
#include <tpkit/tools/execsnoop.h>
#include "execsnoop.skel.h"

#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>
#include <tpkit/support/json.hpp>

#include <fmt/format.h>

#include <cstring>
#include <vector>

namespace {

constexpr const char* examples = R"(  execsnoop                 # every successful exec
  execsnoop -x              # failed execs too
  execsnoop -U -u 1000      # execs by UID 1000, with a UID column
  execsnoop -q              # "quoted" arguments
  execsnoop -n main         # only commands whose name contains "main"
  execsnoop -l tpkg         # only commands whose arguments contain "tpkg"
  execsnoop --json | jq .   # one JSON object per exec, argv as an array
)";

using Event = execsnoop_event;

// The filename and the arguments the event holds.
struct Command {
    std::string_view filename;
    std::vector<std::string_view> args;
};

Command command_of(const Event& e)
{
    const std::size_t size = std::min<std::size_t>(e.strings_size, sizeof(e.strings));
    Command c;
    std::size_t at = std::min<std::size_t>(e.filename_size, size);
    c.filename = {e.strings, strnlen(e.strings, at)};
    for (std::uint32_t i = 0; i < e.args_count && at < size; i++) {
        std::size_t len = strnlen(e.strings + at, size - at);
        c.args.emplace_back(e.strings + at, len);
        at += len + 1;
    }
    return c;
}

bool arg_cut(const Event& e, std::size_t i)
{
    return i < EXECSNOOP_MOST_ARGS && (e.args_cut[i / 64] >> (i % 64)) & 1;
}

// One argument in the text line: control characters escaped (one event, one line), and with
// quotes, quotes and backslashes too; "…" when it is cut.
void append_arg(std::string& out, std::string_view arg, bool cut, bool quote)
{
    if (quote)
        out += '"';
    for (unsigned char c : arg) {
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c < 0x20 || c == 0x7f)
            out += fmt::format("\\x{:02x}", c);
        else if (quote && (c == '"' || c == '\\'))
            out += {'\\', char(c)};
        else
            out += char(c);
    }
    if (cut)
        out += "…";
    if (quote)
        out += '"';
}

// As bcc shows it: the filename, then argv[1] on; " …" when arguments are missing.
std::string command_line(const Event& e, bool quote)
{
    Command c = command_of(e);
    std::string line;
    if (!c.filename.empty() || e.filename_cut)
        append_arg(line, c.filename, e.filename_cut, quote);
    else if (!c.args.empty()) // no readable filename: argv[0] stands for it
        append_arg(line, c.args[0], arg_cut(e, 0), quote);
    for (std::size_t i = 1; i < c.args.size(); i++) {
        line += ' ';
        append_arg(line, c.args[i], arg_cut(e, i), quote);
    }
    if (e.argc > c.args.size())
        line += " …";
    return line;
}

// Text: the command line; JSON: argv as read, an array of strings.
tpkit::Value args_value(const Event& e, bool quote)
{
    std::string json = "[";
    for (std::string_view arg : command_of(e).args) {
        if (json.size() > 1)
            json += ',';
        tpkit::append_json_string(json, arg);
    }
    return tpkit::TextAndJson{command_line(e, quote), json + "]"};
}

tpkit::Value args_quoted(const Event& e) { return args_value(e, true); }
tpkit::Value args_plain(const Event& e) { return args_value(e, false); }

tpkit::Columns<Event> columns(bool print_uid, bool quote)
{
    return {
        tpkit::task_time_column<Event>(),
        tpkit::json_only_unless(print_uid, tpkit::task_column<Event>(tpkit::TaskField::uid, "UID", 6, tpkit::Align::left)),
        {"PCOMM", "pcomm", 16, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.task.comm); }},
        tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::right),
        tpkit::json_column<Event>("tid", [](const Event& e) -> tpkit::Value { return e.task.tid; }),
        {"PPID", "ppid", 7, tpkit::Align::right, [](const Event& e) -> tpkit::Value { return e.ppid; }},
        {"RET", "ret", 3, tpkit::Align::right, [](const Event& e) -> tpkit::Value { return e.ret; }},
        {"ARGS", "args", 0, tpkit::Align::left, quote ? args_quoted : args_plain},
        tpkit::json_column<Event>("argc", [](const Event& e) -> tpkit::Value { return e.argc; }),
        tpkit::json_column<Event>("args_cut", [](const Event& e) -> tpkit::Value {
             return std::uint64_t(__builtin_popcountll(e.args_cut[0]) + __builtin_popcountll(e.args_cut[1]));
         }),
        tpkit::json_column<Event>("filename", [](const Event& e) -> tpkit::Value { return command_of(e).filename; }),
        tpkit::json_column<Event>("filename_cut", [](const Event& e) -> tpkit::Value { return e.filename_cut; }),
        tpkit::json_column<Event>("call", [](const Event& e) -> tpkit::Value {
             return e.call == EXECSNOOP_EXECVEAT ? "execveat" : "execve";
         }),
    };
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("execsnoop", "Trace execve and execveat: every command run, with its arguments.",
                   examples);
    bool failed = false, print_uid = false, quote = false;
    std::string name, line;
    std::uint32_t max_args = EXECSNOOP_DEFAULT_ARGS;
    cli.add_common();
    cli.add_streaming();
    cli.flag("-x,--fails", failed, "failed execs too (RET is -errno)");
    cli.add_time_of_day();
    cli.flag("-U,--print-uid", print_uid, "show a UID column");
    cli.flag("-q,--quote", quote, "put \"quotemarks\" around arguments");
    cli.option("-n,--name", name, "only commands whose name (comm) contains NAME");
    cli.option("-l,--line", line, "only commands whose arguments contain LINE");
    cli.option("--max-args", max_args,
               fmt::format("read at most N arguments, 1 to {} (default {})", EXECSNOOP_MOST_ARGS,
                           EXECSNOOP_DEFAULT_ARGS))
        .type_name("N")
        .range(1, EXECSNOOP_MOST_ARGS);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<execsnoop_bpf, Event>(
            cli, columns(print_uid, quote),
            [&](execsnoop_bpf& skel) {
                skel.rodata->include_failed = failed;
                skel.rodata->max_args = max_args;
            },
            [&](const Event& e) {
                return tpkit::text_of(e.task.comm).find(name) != std::string_view::npos &&
                       (line.empty() || command_line(e, false).find(line) != std::string::npos);
            });
    });
}
