// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// bindsnoop: every bind() of an IPv4 or IPv6 socket, with the address and port, the socket's
// protocol, options and device, and the result, from bind()'s syscall tracepoints.
#include <tpkit/tools/bindsnoop.h>
#include "bindsnoop.skel.h"

#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/run/inet.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <string>

namespace {

constexpr const char* examples = R"(  bindsnoop                 # every successful bind() of an IPv4 or IPv6 socket
  bindsnoop -x              # failed ones too
  bindsnoop -p 1216         # only binds by process 1216
  bindsnoop -P 80,81        # only binds to port 80 or 81
  bindsnoop --cgroup /sys/fs/cgroup/unified/app  # only tasks in that cgroup
  bindsnoop --json | jq .   # one JSON object per bind()
)";

constexpr const char* description = R"(Trace bind() of IPv4 and IPv6 sockets: address, port, options, result.

The socket's options (OPTS), as bcc shows them:
  SOL_IP     IP_FREEBIND              F....
  SOL_IP     IP_TRANSPARENT           .T...
  SOL_IP     IP_BIND_ADDRESS_NO_PORT  ..N..
  SOL_SOCKET SO_REUSEADDR             ...R.
  SOL_SOCKET SO_REUSEPORT             ....r
)";

using Event = bindsnoop_event;

// bcc's OPTS: one letter per option the socket has, '.' for one it has not.
std::string options_text(std::uint8_t options)
{
    std::string text = "FTNRr";
    for (std::size_t i = 0; i < text.size(); i++)
        if (!(options & (1u << i)))
            text[i] = '.';
    return text;
}

const tpkit::Columns<Event> columns{{
    tpkit::task_time_column<Event>(),
    tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::left),
    tpkit::json_column<Event>("tid", [](const Event& e) -> tpkit::Value { return e.task.tid; }),
    tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
    {"RET", "ret", 3, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.ret; }},
    {"PROTO", "proto", 5, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::protocol_name(e.protocol); }},
    {"OPTS", "opts", 5, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return options_text(e.options); }},
    {"IF", "if", 4, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.bound_dev_if; }},
    {"PORT", "port", 5, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.tuple.sport; }},
    {"ADDR", "addr", 0, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::local_address_text(e.tuple); }},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("bindsnoop", description, examples);
    tpkit::InetFilter filter;
    bool include_failed = false;
    cli.add_common();
    cli.add_streaming();
    tpkit::add_ports_option(cli, "-P,--ports", filter.local_ports,
                            "only binds to one of these PORTS (comma-separated)");
    cli.flag("-x,--failed", include_failed, "show failed binds too");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::require_syscall_events("bind"); // classic tracepoints, found in tracefs
        tpkit::run_stream<bindsnoop_bpf, Event>(cli, columns, [&](bindsnoop_bpf& skel) {
            tpkit::apply_inet_filter(skel, filter);
            skel.rodata->include_failed = include_failed;
        });
    });
}
