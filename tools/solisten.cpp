// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// solisten: every listen() on a TCP socket, with its backlog, address, port and result, from
// listen()'s syscall tracepoints and the raw sock:inet_sock_set_state tracepoint.
#include <tpkit/tools/solisten.h>
#include "solisten.skel.h"

#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/run/inet.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <netinet/in.h>

namespace {

constexpr const char* examples = R"(  solisten                  # every listen() on a TCP socket
  solisten -p 1216          # only listens by process 1216
  solisten -T               # seconds since start in the TIME column
  solisten -P 80,443        # only listens on port 80 or 443
  solisten --json | jq .    # one JSON object per listen()
)";

using Event = solisten_event;

const tpkit::Columns<Event> columns{{
    tpkit::task_time_column<Event>(),
    tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::left),
    tpkit::json_column<Event>("tid", [](const Event& e) -> tpkit::Value { return e.task.tid; }),
    tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
    {"RET", "ret", 3, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.ret; }},
    {"BACKLOG", "backlog", 7, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.backlog; }},
    {"PROTO", "proto", 5, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::versioned_protocol_name(IPPROTO_TCP, e.tuple); }},
    {"PORT", "port", 5, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.tuple.sport; }},
    {"ADDR", "addr", 0, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::local_address_text(e.tuple); }},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("solisten", "Trace listen() on TCP sockets: backlog, address, port, result.",
                   examples);
    tpkit::InetFilter filter;
    cli.add_common();
    cli.add_streaming();
    tpkit::add_ports_option(cli, "-P,--port", filter.local_ports,
                            "only listens on one of these PORTS (comma-separated)");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::require_syscall_events("listen"); // classic tracepoints, found in tracefs
        tpkit::run_stream<solisten_bpf, Event>(cli, columns, [&](solisten_bpf& skel) {
            tpkit::apply_inet_filter(skel, filter);
        });
    });
}
