// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcplife: every TCP session as it ends, with its task, addresses, bytes sent and received and
// life span, from the raw sock:inet_sock_set_state tracepoint.
#include <tpkit/tools/tcplife.h>
#include "tcplife.skel.h"

#include <tpkit/run/inet.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/format.h>

namespace {

constexpr const char* examples = R"(  tcplife                   # every TCP session's end
  tcplife -p 181            # only sessions of process 181
  tcplife -L 80             # only sessions on local port 80 (a server's)
  tcplife -D 443 -4         # only IPv4 sessions to remote port 443
  tcplife -w                # room for IPv6 addresses
  tcplife --json | jq .     # one JSON object per session, bytes exact
)";

using Event = tcplife_event;

// Kilobytes with two decimals in text, as bcc shows them; the exact bytes in JSON.
tpkit::Value kilobytes(std::uint64_t bytes)
{
    return tpkit::TextAndJson{fmt::format("{:.2f}", bytes / 1024.0), std::to_string(bytes)};
}

tpkit::Columns<Event> columns(bool wide)
{
    const int address_width = wide ? 39 : 15;
    return {
        tpkit::time_column<Event>([](const Event& e) -> tpkit::Value { return e.task.timestamp_ns; }),
        {"PID", "pid", 7, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.task.pid; }},
        {"COMM", "comm", 16, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.task.comm); }},
        tpkit::json_column<Event>("ip", [](const Event& e) -> tpkit::Value { return tpkit::ip_version(e.tuple); }),
        {"LADDR", "laddr", address_width, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::local_address_text(e.tuple); }},
        {"LPORT", "lport", 5, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.tuple.sport; }},
        {"RADDR", "raddr", address_width, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::remote_address_text(e.tuple); }},
        {"RPORT", "rport", 5, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.tuple.dport; }},
        {"TX_KB", "tx_bytes", 6, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return kilobytes(e.tx_bytes); }},
        {"RX_KB", "rx_bytes", 6, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return kilobytes(e.rx_bytes); }},
        {"MS", "span_ns", 0, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::milliseconds_value(e.span_ns, 2); }},
    };
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tcplife", "Trace TCP sessions as they end: who, where, bytes and how long.",
                   examples);
    tpkit::InetFilter filter;
    bool wide = false;
    cli.add_common();
    cli.keep_own_process();
    cli.add_streaming();
    cli.add_time_of_day();
    tpkit::add_socket_filter_options(cli, filter, "sessions");
    cli.flag("-w,--wide", wide, "wide columns (fit IPv6 addresses)");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<tcplife_bpf, Event>(cli, columns(wide), [&](tcplife_bpf& skel) {
            tpkit::apply_inet_filter(skel, filter);
        });
    });
}
