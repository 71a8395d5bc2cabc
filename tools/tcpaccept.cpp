// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpaccept: every TCP connection a task accepts, with the peer and the local address, at the
// return of accept() and accept4().
#include <tpkit/tools/tcpaccept.h>
#include "tcpaccept.skel.h"

#include <tpkit/run/inet.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  tcpaccept                 # every accepted TCP connection
  tcpaccept -p 181          # only those process 181 accepts
  tcpaccept -P 80,443       # only those accepted on local port 80 or 443
  tcpaccept -4              # only IPv4
  tcpaccept --json | jq .   # one JSON object per accepted connection
)";

using Event = tcpaccept_event;

const tpkit::Columns<Event> columns{{
    tpkit::time_column<Event>([](const Event& e) -> tpkit::Value { return e.task.timestamp_ns; }),
    {"PID", "pid", 7, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.task.pid; }},
    tpkit::json_column<Event>("tid", [](const Event& e) -> tpkit::Value { return e.task.tid; }),
    {"COMM", "comm", 16, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.task.comm); }},
    {"IP", "ip", 2, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return tpkit::ip_version(e.tuple); }},
    {"RADDR", "raddr", 16, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::remote_address_text(e.tuple); }},
    {"RPORT", "rport", 5, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.tuple.dport; }},
    {"LADDR", "laddr", 16, tpkit::Align::left,
     [](const Event& e) -> tpkit::Value { return tpkit::local_address_text(e.tuple); }},
    {"LPORT", "lport", 0, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.tuple.sport; }},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tcpaccept", "Trace TCP connections accepted by tasks (accept, accept4).",
                   examples);
    tpkit::InetFilter filter;
    cli.add_common();
    cli.add_streaming();
    tpkit::add_family_options(cli, filter);
    tpkit::add_ports_option(cli, "-P,--port", filter.local_ports,
                            "only connections accepted on one of these local PORTS (comma-separated)");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<tcpaccept_bpf, Event>(cli, columns, [&](tcpaccept_bpf& skel) {
            tpkit::apply_inet_filter(skel, filter);
        });
    });
}
