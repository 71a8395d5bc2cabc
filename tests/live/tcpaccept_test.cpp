// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpaccept against real connections on the loopback of a private network namespace (IPv4,
// IPv6, v4-mapped): a server of known PID accepts N connections on a known port; exactly those
// N appear, in order, each with the client's port; -P keeps one local port's.
#include "live.hpp"
#include "net_namespace.hpp"
#include "tcp_tools.hpp"

#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::Inet;
using tpkit::live::TcpEvent;

namespace {

constexpr std::uint16_t accept_server_port = 5006, accept_other_port = 5007;
constexpr int connections = 4;
constexpr std::size_t accept_request = 10, accept_reply = 20; // bytes each connection carries

constexpr std::size_t tcpaccept_links = 2; // sys_exit_accept, sys_exit_accept4

void expect_exact_accepts(Inet inet)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::start_tcp_tool("tcpaccept", {}, ns, true);
    tpkit::live::TcpServer server(ns, inet, accept_server_port, connections, accept_request,
                                  accept_reply);
    server.start();
    auto client = tpkit::live::run_tcp_client(
        ns, inet, std::vector<std::uint16_t>(connections, accept_server_port), accept_request,
        accept_reply);
    ASSERT_EQ(server.wait(), 0);
    ASSERT_EQ(client.status, 0);
    ASSERT_EQ(client.results.size(), std::size_t(connections));
    int seen = 0;
    ASSERT_TRUE(tool->wait_for_line(
        [&](const std::string& line) {
            return (seen += tpkit::live::parse_flat_json(line)["pid"] == std::to_string(server.pid())) ==
                   connections;
        },
        10s))
        << tool->stderr_text();
    auto accepts = tpkit::live::of_pid(tpkit::live::stop_and_take_events(*tool), server.pid());
    ASSERT_EQ(accepts.size(), std::size_t(connections));
    for (std::size_t i = 0; i < accepts.size(); i++) {
        SCOPED_TRACE("accept " + std::to_string(i));
        const TcpEvent& e = accepts[i];
        EXPECT_EQ(e.at("comm"), "tpk-server");
        EXPECT_EQ(e.at("ip"), std::to_string(tpkit::live::ip_version(inet)));
        EXPECT_EQ(e.at("raddr"), tpkit::live::loopback_text(inet));
        EXPECT_EQ(e.at("rport"), std::to_string(client.results[i]));
        EXPECT_EQ(e.at("laddr"), tpkit::live::loopback_text(inet));
        EXPECT_EQ(e.at("lport"), std::to_string(accept_server_port));
    }
}

} // namespace

TEST(TcpacceptExact, FourIpv4Accepts) { expect_exact_accepts(Inet::v4); }

TEST(TcpacceptExact, FourIpv6Accepts) { expect_exact_accepts(Inet::v6); }

TEST(TcpacceptExact, FourV4MappedAccepts) { expect_exact_accepts(Inet::v4_mapped); }

// -P: only what is accepted on that local port, not on another.
TEST(TcpacceptExact, PortKeepsOnlyAcceptsOnIt)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    tpkit::live::ToolRun tool({tpkit::live::tool_path("tcpaccept"), "--json", "-P", std::to_string(accept_other_port)});
    ASSERT_TRUE(tool.wait_until_attached(tcpaccept_links, 10s)) << tool.stderr_text();
    auto first = tpkit::live::run_tcp_session(ns, Inet::v4, accept_server_port, accept_request,
                                              accept_reply);
    pid_t server_pid = 0;
    auto second = tpkit::live::run_tcp_session(ns, Inet::v4, accept_other_port, accept_request,
                                               accept_reply, &server_pid);
    ASSERT_EQ(first.status, 0);
    ASSERT_EQ(second.status, 0);
    ASSERT_TRUE(tool.wait_for_line(
        [&](const std::string& line) { return tpkit::live::parse_flat_json(line)["pid"] == std::to_string(server_pid); },
        10s))
        << tool.stderr_text();
    auto events = tpkit::live::stop_and_take_events(tool);
    ASSERT_EQ(events.size(), 1u); // the second session's accept
    EXPECT_EQ(events[0].at("lport"), std::to_string(accept_other_port));
    EXPECT_EQ(events[0].at("rport"), std::to_string(second.results.at(0)));
}
