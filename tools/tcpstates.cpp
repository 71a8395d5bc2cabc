// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpstates: every TCP state change, with the socket's addresses and how long it spent in the
// state it leaves, from the raw sock:inet_sock_set_state tracepoint.
#include <tpkit/tools/tcpstates.h>
#include "tcpstates.skel.h"

#include <tpkit/run/inet.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/format.h>

namespace {

constexpr const char* examples = R"(  tcpstates                 # every TCP state change
  tcpstates -T              # seconds since start instead of the time of day
  tcpstates -L 80           # only sockets on local port 80
  tcpstates -D 80,443       # only sockets connected to remote port 80 or 443
  tcpstates -6 -w           # only IPv6, with room for its addresses
  tcpstates --json | jq .   # one JSON object per change
)";

using Event = tcpstates_event;

// The old state followed by bcc's arrow in text, its name alone in JSON.
tpkit::Value old_state_of(const Event& e)
{
    std::string_view name = tpkit::tcp_state_name(e.oldstate);
    return tpkit::TextAndJson{fmt::format("{:<11} ->", name), fmt::format("\"{}\"", name)};
}

// bcc's columns; -w widens COMM and the addresses and shows IP (always in JSON).
tpkit::Columns<Event> columns(bool wide)
{
    const int address_width = wide ? 39 : 15;
    return {
        tpkit::time_column<Event>([](const Event& e) -> tpkit::Value { return e.task.timestamp_ns; }),
        {"SKADDR", "skaddr", 16, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return fmt::format("{:x}", e.skaddr); }},
        {"PID", "pid", 7, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.task.pid; }},
        {"COMM", "comm", wide ? 16 : 10, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.task.comm); }},
        tpkit::json_only_unless<Event>(wide, {"IP", "ip", 2, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::ip_version(e.tuple); }}),
        {"LADDR", "laddr", address_width, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::local_address_text(e.tuple); }},
        {"LPORT", "lport", 5, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.tuple.sport; }},
        {"RADDR", "raddr", address_width, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::remote_address_text(e.tuple); }},
        {"RPORT", "rport", 5, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.tuple.dport; }},
        {"OLDSTATE    ->", "oldstate", 14, tpkit::Align::left, old_state_of},
        {"NEWSTATE", "newstate", 11, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::tcp_state_name(e.newstate); }},
        // How long the socket was in the old state: unknown when it entered it before the tool
        // started (or before -L saw its port).
        {"MS", "old_state_ns", 0, tpkit::Align::left, [](const Event& e) -> tpkit::Value {
             if (!e.old_state_seen)
                 return tpkit::absent;
             return tpkit::milliseconds_value(e.old_state_ns, 3);
         }},
    };
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tcpstates", "Trace TCP state changes and how long sockets spent in each state.",
                   examples);
    tpkit::InetFilter filter;
    bool wide = false;
    cli.add_common();
    cli.keep_own_process();
    cli.add_streaming();
    tpkit::add_socket_filter_options(cli, filter, "sockets");
    cli.flag("-w,--wide", wide, "wide columns (fit IPv6 addresses), with the IP version");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<tcpstates_bpf, Event>(cli, columns(wide), [&](tcpstates_bpf& skel) {
            tpkit::apply_inet_filter(skel, filter);
        });
    });
}
