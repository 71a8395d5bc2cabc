// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpconnect: every active TCP open (connect()), with its task and destination, or with -c a
// count per source and destination, from the raw sock:inet_sock_set_state tracepoint.
#include <tpkit/tools/tcpconnect.h>
#include "tcpconnect.skel.h"

#include <tpkit/run/inet.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

namespace {

constexpr const char* examples = R"(  tcpconnect                # every TCP connect
  tcpconnect -p 181         # only connects by process 181
  tcpconnect -P 80,443      # only connects to port 80 or 443
  tcpconnect -U             # with the UID of each connecting task
  tcpconnect -u 1000        # only connects by tasks of user 1000
  tcpconnect -c -d 10       # count connects per source and destination for 10 s
  tcpconnect --json | jq .  # one JSON object per connect
)";

using Event = tcpconnect_event;

tpkit::Columns<Event> columns(bool print_uid)
{
    return {
        tpkit::time_column<Event>([](const Event& e) -> tpkit::Value { return e.task.timestamp_ns; }),
        tpkit::json_only_unless<Event>(print_uid, {"UID", "uid", 6, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return e.task.uid; }}),
        {"PID", "pid", 7, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.task.pid; }},
        tpkit::json_column<Event>("tid", [](const Event& e) -> tpkit::Value { return e.task.tid; }),
        {"COMM", "comm", 16, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.task.comm); }},
        {"IP", "ip", 2, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::ip_version(e.tuple); }},
        {"SADDR", "saddr", 16, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::local_address_text(e.tuple); }},
        {"DADDR", "daddr", 16, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::remote_address_text(e.tuple); }},
        {"DPORT", "dport", 0, tpkit::Align::left, [](const Event& e) -> tpkit::Value { return e.tuple.dport; }},
    };
}

// -c: connects per source address, destination address and port.
const tpkit::Columns<tpkit::TupleCount> count_columns{{
    {"SADDR", "saddr", 25, tpkit::Align::left,
     [](const tpkit::TupleCount& c) -> tpkit::Value { return tpkit::local_address_text(c.tuple); }},
    {"DADDR", "daddr", 25, tpkit::Align::left,
     [](const tpkit::TupleCount& c) -> tpkit::Value { return tpkit::remote_address_text(c.tuple); }},
    {"DPORT", "dport", 10, tpkit::Align::left,
     [](const tpkit::TupleCount& c) -> tpkit::Value { return c.tuple.dport; }},
    {"CONNECTS", "connects", 0, tpkit::Align::left,
     [](const tpkit::TupleCount& c) -> tpkit::Value { return c.count; }},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tcpconnect", "Trace active TCP opens (connect), or count them per destination.",
                   examples);
    tpkit::InetFilter filter;
    bool print_uid = false, count = false;
    cli.add_common();
    cli.add_streaming();
    tpkit::add_family_options(cli, filter);
    tpkit::add_ports_option(cli, "-P,--port", filter.remote_ports,
                            "only connects to one of these destination PORTS (comma-separated)");
    cli.flag("-U,--print-uid", print_uid, "show the UID of the connecting task");
    cli.flag("-c,--count", count,
             "count connects per source address, destination address and port; print "
             "the counts at the end");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    auto configure = [&](tcpconnect_bpf& skel) { tpkit::apply_inet_filter(skel, filter); };
    return tpkit::run_tool(cli.name(), [&] {
        if (!count) {
            tpkit::run_stream<tcpconnect_bpf, Event>(cli, columns(print_uid), configure);
            return;
        }
        tpkit::TupleCounter counter;
        tpkit::run_stream<tcpconnect_bpf, Event>(
            cli,
            [&](const Event& e) {
                tpkit_inet_tuple destination = e.tuple;
                destination.sport = 0;
                counter.add(destination);
            },
            configure, {}, [&] { count_columns.table(counter.rows(), cli.options(), tpkit::standard_output()); });
    });
}
