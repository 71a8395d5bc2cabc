// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// sofdsnoop: file descriptors passed over Unix sockets (SCM_RIGHTS), from the syscalls:
// sendmsg, recvmsg, sendmmsg and recvmmsg tracepoints; bcc's sofdsnoop.
#include <tpkit/tools/sofdsnoop.h>
#include "sofdsnoop.skel.h"

#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/format.h>

#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr const char* examples = R"(  sofdsnoop                 # every descriptor passed over a socket
  sofdsnoop -T              # with seconds since the start
  sofdsnoop -p 181          # only by process 181
  sofdsnoop -t 123          # only by thread 123
  sofdsnoop -n main         # only tasks whose name contains main
  sofdsnoop -d 10           # for 10 seconds
  sofdsnoop --json | jq .   # one JSON object per descriptor
)";

using Event = sofdsnoop_event;

// One line: a descriptor of a message, or a note on what the message held that was not read
// (fd < 0: index is then -1).
struct Row {
    tpkit_task_header task;
    const Event* e;
    int index;        // into e->fds, -1 for a note
    std::string name; // the file's name, or the note
    bool name_cut;
};

bool receive(const Event& e) { return e.call == SOFDSNOOP_RECVMSG || e.call == SOFDSNOOP_RECVMMSG; }

const char* call_name(const Event& e)
{
    switch (e.call) {
    case SOFDSNOOP_SENDMSG: return "sendmsg";
    case SOFDSNOOP_RECVMSG: return "recvmsg";
    case SOFDSNOOP_SENDMMSG: return "sendmmsg";
    case SOFDSNOOP_RECVMMSG: return "recvmmsg";
    default: return "?";
    }
}

// A file's name from its names, innermost first: a path from the root, or a pseudo file's
// name as /proc/PID/fd shows it (socket:[N], pipe:[N]).
std::string file_name(const Event& e, int i, std::size_t& at, bool& cut)
{
    const sofdsnoop_file& f = e.files[i];
    const std::size_t end = std::min<std::size_t>(e.names_size, sizeof(e.strings));
    std::vector<std::string_view> names;
    for (unsigned n = 0; n < f.names && at < end; n++) {
        std::string_view name(e.strings + at, strnlen(e.strings + at, end - at));
        names.push_back(name);
        at += name.size() + 1;
    }
    cut = f.flags & SOFDSNOOP_FILE_CUT;
    if (!(f.flags & SOFDSNOOP_FILE_OPEN))
        return cut ? "?" : "(not open)";
    if (f.flags & SOFDSNOOP_FILE_DETACHED) {
        if (S_ISSOCK(f.mode))
            return fmt::format("socket:[{}]", f.ino);
        if (S_ISFIFO(f.mode))
            return fmt::format("pipe:[{}]", f.ino);
        return names.empty() ? std::string("?") : std::string(names[0]);
    }
    std::string path;
    for (auto it = names.rbegin(); it != names.rend(); ++it)
        path += fmt::format("/{}", *it);
    return path.empty() ? "/" : path;
}

std::vector<Row> rows_of(const Event& e)
{
    std::vector<Row> rows;
    auto note = [&](std::string text) { rows.push_back({e.task, &e, -1, std::move(text), false}); };
    if (e.fault & SOFDSNOOP_MMSG_CUT) {
        note(fmt::format("({} more messages not read)", e.fd_count));
        return rows;
    }
    std::size_t at = 0;
    const int read = std::min<int>(e.fds_read, SOFDSNOOP_MAX_FDS);
    for (int i = 0; i < read; i++) {
        bool cut = false;
        std::string name = file_name(e, i, at, cut);
        rows.push_back({e.task, &e, i, std::move(name), cut});
    }
    if (e.fd_count > e.fds_read)
        note(fmt::format("({} more descriptors not read)", e.fd_count - e.fds_read));
    if (e.fault & SOFDSNOOP_FAULT_MSGHDR)
        note("(struct msghdr unreadable)");
    if (e.fault & SOFDSNOOP_FAULT_CONTROL)
        note("(control data unreadable)");
    if (e.cmsgs_cut)
        note(fmt::format("(control messages past the first {} not read)", SOFDSNOOP_MAX_CMSGS));
    if (receive(e) && (e.msg_flags & MSG_CTRUNC))
        note("(MSG_CTRUNC: the kernel discarded descriptors that did not fit)");
    return rows;
}

const tpkit::Columns<Row> columns{{
    tpkit::task_time_column<Row>(),
    {"ACTION", "action", 6, tpkit::Align::left,
     [](const Row& r) -> tpkit::Value { return receive(*r.e) ? "RECV" : "SEND"; }},
    tpkit::json_column<Row>("pid", [](const Row& r) -> tpkit::Value { return r.task.pid; }),
    tpkit::task_column<Row>(tpkit::TaskField::tid, "TID", 7, tpkit::Align::left),
    tpkit::task_column<Row>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
    {"SOCKET", "", 25, tpkit::Align::left,
     [](const Row& r) -> tpkit::Value {
         return r.e->sock_ino ? fmt::format("{}:socket:[{}]", r.e->sock_fd, r.e->sock_ino)
                              : fmt::format("{}:?", r.e->sock_fd);
     }},
    tpkit::json_column<Row>("sock_fd", [](const Row& r) -> tpkit::Value { return r.e->sock_fd; }),
    tpkit::json_column<Row>("sock_ino", [](const Row& r) -> tpkit::Value { return r.e->sock_ino; }),
    {"FD", "fd", 5, tpkit::Align::left,
     [](const Row& r) -> tpkit::Value {
         if (r.index < 0)
             return tpkit::absent;
         return r.e->fds[r.index];
     }},
    {"NAME", "name", 0, tpkit::Align::left,
     [](const Row& r) -> tpkit::Value { return tpkit::cut_text(r.name, r.name_cut); }},
    tpkit::json_column<Row>("name_cut", [](const Row& r) -> tpkit::Value { return int(r.name_cut); }),
    tpkit::json_column<Row>("call", [](const Row& r) -> tpkit::Value { return call_name(*r.e); }),
    tpkit::json_column<Row>("msg_index", [](const Row& r) -> tpkit::Value { return r.e->msg_index; }),
    tpkit::json_column<Row>("fd_index", [](const Row& r) -> tpkit::Value {
        if (r.index < 0)
            return tpkit::absent;
        return r.index;
    }),
    tpkit::json_column<Row>("fd_count", [](const Row& r) -> tpkit::Value { return r.e->fd_count; }),
    tpkit::json_column<Row>("fds_read", [](const Row& r) -> tpkit::Value { return r.e->fds_read; }),
    tpkit::json_column<Row>("msg_flags", [](const Row& r) -> tpkit::Value { return r.e->msg_flags; }),
    tpkit::json_column<Row>("fault", [](const Row& r) -> tpkit::Value { return r.e->fault; }),
    tpkit::json_column<Row>("ret", [](const Row& r) -> tpkit::Value { return r.e->ret; }),
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("sofdsnoop",
                   "Trace file descriptors passed over Unix sockets (SCM_RIGHTS) by sendmsg, "
                   "recvmsg, sendmmsg and recvmmsg.",
                   examples);
    std::string name;
    cli.add_common();
    cli.add_streaming();
    cli.option("-n,--name", name, "only tasks whose name (comm) contains NAME");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        const tpkit::CommonOptions& options = cli.options();
        tpkit::Output& out = tpkit::standard_output();
        tpkit::MonotonicClock clock;
        tpkit::run_stream<sofdsnoop_bpf, Event>(
            cli,
            [&](const Event& e) {
                if (tpkit::text_of(e.task.comm).find(name) == std::string_view::npos)
                    return;
                for (const Row& row : rows_of(e))
                    columns.row(row, options, clock, out);
            },
            {},
            [&] { columns.header(options, out); });
    });
}
