// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpretrans against real retransmits on the loopback of a private network namespace. A socket
// filter on the receiving socket (classic BPF returning 0) drops what reaches it, so the sender
// retransmits until the filter is taken off. The oracle is the kernel's own trace of the same
// events in a private ftrace instance (filtered by the flow's server port), and the tool must
// show exactly as many, with the flow's addresses, ports and state. The namespace's RetransSegs
// (/proc/net/snmp) says when enough retransmits happened, and failures show it; it is not the
// oracle: in one run on a loaded host it grew by one more than the tool showed, and only a trace
// of the very events the tool reads tells a miss by the tool from a count the event never saw.
// The loss is a socket filter, not an nftables rule, so the test runs unchanged in the 6.1 VM
// (lossy_flow.hpp).
//   - a data segment the receiving socket drops: R> retransmits of an ESTABLISHED flow;
//   - the final ACK of a handshake the listener drops: S> retransmits of its SYN-ACK
//     (NEW_SYN_RECV), as the request socket's timer resends it;
//   - -c: the same data-segment loss as one count for the flow.
#include "live.hpp"
#include "lossy_flow.hpp"
#include "net_namespace.hpp"
#include "tcp_tools.hpp"
#include "trace_instance.hpp"

#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::Inet;
using tpkit::live::LossyFlow;
using tpkit::live::TcpEvent;

namespace {

constexpr std::uint16_t data_port = 5011, handshake_port = 5012;
// Retransmits to wait for before the filter comes off: more than one, so a count of one (a tail
// loss probe alone) would not pass for the whole.
constexpr std::uint64_t wanted_retransmits = 2;

// What the kernel counted while one lossy flow lost and recovered.
struct Outcome {
    std::uint16_t client_port = 0;
    std::uint64_t retransmits = 0;  // the kernel's trace of the flow's retransmits
    std::uint64_t retrans_segs = 0; // the namespace's RetransSegs over the flow's life
};

// The kernel's trace of retransmits to and from the server port: the client's segments go to it
// (dport), the server's SYN-ACKs come from it (sport).
void trace_flow(tpkit::live::TraceInstance& trace, std::uint16_t server_port)
{
    const std::string port = std::to_string(server_port);
    ASSERT_EQ(trace.set_filter("tcp", "tcp_retransmit_skb", "dport == " + port), "");
    ASSERT_EQ(trace.set_filter("tcp", "tcp_retransmit_synack", "sport == " + port), "");
    trace.enable("tcp", "tcp_retransmit_skb", true);
    trace.enable("tcp", "tcp_retransmit_synack", true);
}

Outcome run_lossy_flow(const tpkit::live::NetNamespace& ns, LossyFlow& flow, std::uint64_t wanted)
{
    Outcome outcome;
    tpkit::live::TraceInstance trace("tcpretrans");
    trace_flow(trace, flow.server_port());
    const std::uint64_t before = tpkit::live::tcp_counter(ns, "RetransSegs");
    flow.lose(ns, wanted);
    EXPECT_EQ(flow.wait(outcome.client_port), 0);
    outcome.retrans_segs = tpkit::live::tcp_counter(ns, "RetransSegs") - before;
    trace.enable("tcp", "tcp_retransmit_skb", false);
    trace.enable("tcp", "tcp_retransmit_synack", false);
    // The filter's port is every flow's to that port: another namespace's (a test running beside
    // this one), or the previous test's, whose closing sockets can still retransmit. Only those
    // of this flow's own client port count.
    const std::string client = "port=" + std::to_string(outcome.client_port) + " ";
    for (const std::string& line : trace.take_lines())
        outcome.retransmits += line.find(" s" + client) != std::string::npos ||
                               line.find(" d" + client) != std::string::npos;
    EXPECT_GE(outcome.retransmits, wanted) << "RetransSegs grew by " << outcome.retrans_segs;
    EXPECT_NE(outcome.client_port, 0);
    return outcome;
}

// The tool's events of one flow, once it has shown `count` of them (a test failure if it does
// not in time), the tool stopped.
std::vector<TcpEvent> flow_events(tpkit::live::ToolRun& tool, const std::string& key,
                                  std::uint16_t port, std::uint64_t count)
{
    const std::string wanted = std::to_string(port);
    std::uint64_t seen = 0;
    EXPECT_TRUE(tool.wait_for_line(
        [&](const std::string& line) {
            return (seen += tpkit::live::parse_flat_json(line)[key] == wanted) >= count;
        },
        tpkit::live::patient(10s)))
        << "saw " << seen << " of " << count << "; stderr: " << tool.stderr_text();
    std::vector<TcpEvent> events;
    for (auto& e : tpkit::live::stop_and_take_events(tool))
        if (e[key] == wanted)
            events.push_back(e);
    return events;
}

void expect_segment_retransmits(Inet inet)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::attached_json_tool("tcpretrans", {}, 2);
    LossyFlow flow(ns, inet, LossyFlow::Loss::data, data_port);
    Outcome outcome = run_lossy_flow(ns, flow, wanted_retransmits);
    auto events = flow_events(*tool, "lport", outcome.client_port, outcome.retransmits);
    ASSERT_EQ(events.size(), outcome.retransmits) << "RetransSegs grew by " << outcome.retrans_segs;
    const std::string address = tpkit::live::loopback_text(inet);
    for (const TcpEvent& e : events) {
        EXPECT_EQ(e.at("ip"), std::to_string(tpkit::live::ip_version(inet)));
        EXPECT_EQ(e.at("laddr"), address);
        EXPECT_EQ(e.at("raddr"), address);
        EXPECT_EQ(e.at("rport"), std::to_string(flow.server_port()));
        EXPECT_EQ(e.at("kind"), "R");
        EXPECT_EQ(e.at("state"), "ESTABLISHED");
    }
}

} // namespace

TEST(TcpretransExact, Ipv4SegmentRetransmitsAsTheKernelCounts) { expect_segment_retransmits(Inet::v4); }

TEST(TcpretransExact, Ipv6SegmentRetransmitsAsTheKernelCounts) { expect_segment_retransmits(Inet::v6); }

TEST(TcpretransExact, V4MappedSegmentRetransmitsAsTheKernelCounts)
{
    expect_segment_retransmits(Inet::v4_mapped);
}

// The listener drops the handshake's final ACK: its request socket resends the SYN-ACK (first
// after a second) until the filter comes off.
TEST(TcpretransExact, SynAckRetransmitsAsTheKernelCounts)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::attached_json_tool("tcpretrans", {}, 2);
    LossyFlow flow(ns, Inet::v4, LossyFlow::Loss::handshake, handshake_port);
    Outcome outcome = run_lossy_flow(ns, flow, 1);
    auto events = flow_events(*tool, "rport", outcome.client_port, outcome.retransmits);
    ASSERT_EQ(events.size(), outcome.retransmits) << "RetransSegs grew by " << outcome.retrans_segs;
    for (const TcpEvent& e : events) {
        EXPECT_EQ(e.at("ip"), "4");
        EXPECT_EQ(e.at("laddr"), "127.0.0.1");
        EXPECT_EQ(e.at("lport"), std::to_string(flow.server_port()));
        EXPECT_EQ(e.at("raddr"), "127.0.0.1");
        EXPECT_EQ(e.at("kind"), "S");
        EXPECT_EQ(e.at("state"), "NEW_SYN_RECV");
    }
}

// -c: one row for the flow, its count the kernel's.
TEST(TcpretransExact, CountPerFlowAsTheKernelCounts)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::attached_json_tool("tcpretrans", {"-c"}, 2);
    LossyFlow flow(ns, Inet::v4, LossyFlow::Loss::data, data_port);
    Outcome outcome = run_lossy_flow(ns, flow, wanted_retransmits);
    // Every event is in the tool's buffer once the kernel has counted it; the tool reads what is
    // left there when it stops, then prints the counts.
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    std::vector<TcpEvent> rows;
    for (const auto& line : tool->lines()) {
        TcpEvent row = tpkit::live::parse_flat_json(line);
        if (row["lport"] == std::to_string(outcome.client_port))
            rows.push_back(row);
    }
    ASSERT_EQ(rows.size(), 1u) << tool->stderr_text();
    EXPECT_EQ(rows[0].at("laddr"), "127.0.0.1");
    EXPECT_EQ(rows[0].at("raddr"), "127.0.0.1");
    EXPECT_EQ(rows[0].at("rport"), std::to_string(data_port));
    EXPECT_EQ(rows[0].at("retransmits"), std::to_string(outcome.retransmits))
        << "RetransSegs grew by " << outcome.retrans_segs;
    EXPECT_EQ(tool->lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
}
