// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpretrans: every TCP retransmit (segments, SYNs and SYN-ACKs) with the socket's addresses and
// state, or with -c a count per flow, from the raw tracepoints tcp_retransmit_skb and
// tcp_retransmit_synack.
#include <tpkit/tools/tcpretrans.h>
#include "tcpretrans.skel.h"

#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/kernel/syscalls.hpp>
#include <tpkit/run/inet.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/format.h>

#include <string>
#include <vector>

namespace {

constexpr const char* examples = R"(  tcpretrans                # every TCP retransmit
  tcpretrans -s             # with each segment's sequence number
  tcpretrans -c -d 60       # count retransmits per flow for a minute
  tcpretrans -4             # only IPv4
  tcpretrans --failed       # also the retransmits the kernel tried and could not send
  tcpretrans --json | jq .  # one JSON object per retransmit
)";

using Event = tcpretrans_event;

// bcc's T column: R> a retransmitted segment (a SYN too), S> a retransmitted SYN-ACK of a
// connection not yet accepted (bcc shows none; L> for tail loss probes needs a kprobe).
tpkit::Value kind_of(const Event& e)
{
    const char* kind = e.kind == TCPRETRANS_SYNACK ? "S" : "R";
    return tpkit::TextAndJson{fmt::format("{}>", kind), fmt::format("\"{}\"", kind)};
}

// A failed retransmit's error by its name (EBUSY), in JSON the kernel's number (-16); 0: sent.
tpkit::Value error_of(const Event& e)
{
    const auto name = tpkit::errno_name(-e.err);
    std::string text = e.err == 0 ? "0" : name ? std::string(*name) : std::to_string(e.err);
    return tpkit::TextAndJson{std::move(text), std::to_string(e.err)};
}

// bcc's columns; ADDR:PORT in text, each part its own member in JSON. ERR only with --failed:
// without it every retransmit shown was sent.
tpkit::Columns<Event> columns(bool sequence, bool failed)
{
    std::vector<tpkit::Column<Event>> list{
        tpkit::task_time_column<Event>(),
        tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::left),
        tpkit::json_column<Event>("tid", [](const Event& e) -> tpkit::Value { return e.task.tid; }),
        tpkit::json_column<Event>("comm", [](const Event& e) -> tpkit::Value { return tpkit::text_of(e.task.comm); }),
        {"IP", "ip", 2, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::ip_version(e.tuple); }},
        {"LADDR:LPORT", "", 20, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::local_endpoint_text(e.tuple); }},
        tpkit::json_column<Event>("laddr", [](const Event& e) -> tpkit::Value { return tpkit::local_address_text(e.tuple); }),
        tpkit::json_column<Event>("lport", [](const Event& e) -> tpkit::Value { return e.tuple.sport; }),
        {"T>", "kind", 2, tpkit::Align::left, kind_of},
        {"RADDR:RPORT", "", 20, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::remote_endpoint_text(e.tuple); }},
        tpkit::json_column<Event>("raddr", [](const Event& e) -> tpkit::Value { return tpkit::remote_address_text(e.tuple); }),
        tpkit::json_column<Event>("rport", [](const Event& e) -> tpkit::Value { return e.tuple.dport; }),
        {"STATE", "state", sequence || failed ? 12 : 0, tpkit::Align::left,
         [](const Event& e) -> tpkit::Value { return tpkit::tcp_state_name(e.state); }},
    };
    if (sequence)
        list.push_back({"SEQ", "seq", failed ? 10 : 0, tpkit::Align::left,
                        [](const Event& e) -> tpkit::Value { return e.seq; }});
    list.push_back(tpkit::json_only_unless<Event>(failed, {"ERR", "err", 0, tpkit::Align::left, error_of}));
    return tpkit::Columns<Event>(std::move(list));
}

// -c: retransmits per flow (addresses and ports), as bcc counts them.
const tpkit::Columns<tpkit::TupleCount> count_columns{{
    {"LADDR:LPORT", "", 25, tpkit::Align::left,
     [](const tpkit::TupleCount& c) -> tpkit::Value { return tpkit::local_endpoint_text(c.tuple); }},
    tpkit::json_column<tpkit::TupleCount>("laddr", [](const tpkit::TupleCount& c) -> tpkit::Value { return tpkit::local_address_text(c.tuple); }),
    tpkit::json_column<tpkit::TupleCount>("lport", [](const tpkit::TupleCount& c) -> tpkit::Value { return c.tuple.sport; }),
    {"RADDR:RPORT", "", 25, tpkit::Align::left,
     [](const tpkit::TupleCount& c) -> tpkit::Value { return tpkit::remote_endpoint_text(c.tuple); }},
    tpkit::json_column<tpkit::TupleCount>("raddr", [](const tpkit::TupleCount& c) -> tpkit::Value { return tpkit::remote_address_text(c.tuple); }),
    tpkit::json_column<tpkit::TupleCount>("rport", [](const tpkit::TupleCount& c) -> tpkit::Value { return c.tuple.dport; }),
    {"RETRANSMITS", "retransmits", 0, tpkit::Align::left,
     [](const tpkit::TupleCount& c) -> tpkit::Value { return c.count; }},
}};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tcpretrans",
                   "Trace TCP retransmits (R> segments and SYNs, S> SYN-ACKs), or count them per "
                   "flow.",
                   examples);
    tpkit::InetFilter filter;
    bool sequence = false, count = false, failed = false;
    cli.add_common();
    cli.keep_own_process();
    cli.add_streaming();
    tpkit::add_family_options(cli, filter);
    cli.flag("-s,--sequence", sequence, "show each retransmitted segment's sequence number");
    cli.flag("-c,--count", count,
             "count retransmits per flow (addresses and ports); print the counts at the end");
    cli.flag("--failed", failed,
             "also retransmits the kernel could not send (ERR: EBUSY while the original is "
             "still queued in the host, ENOMEM, …); without it only those sent, which "
             "TcpRetransSegs counts");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    auto configure = [&](tcpretrans_bpf& skel) {
        tpkit::apply_inet_filter(skel, filter);
        skel.rodata->tcpretrans_failed_too = failed;
    };
    return tpkit::run_tool(cli.name(), [&] {
        for (const char* event : {"tcp_retransmit_skb", "tcp_retransmit_synack"})
            if (!tpkit::kernel_has_raw_tracepoint(event))
                throw tpkit::Error(tpkit::Exit::unknown_target,
                                   fmt::format("this kernel has no tcp:{} tracepoint", event));
        if (!count) {
            tpkit::run_stream<tcpretrans_bpf, Event>(cli, columns(sequence, failed), configure);
            return;
        }
        // Printed fewest first, as bcc does: the most nearest the prompt.
        tpkit::TupleCounter counter;
        tpkit::run_stream<tcpretrans_bpf, Event>(
            cli, [&](const Event& e) { counter.add(e.tuple); }, configure, {}, [&] {
                count_columns.table(counter.rows(true), cli.options(), tpkit::standard_output());
            });
    });
}
