// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpconnect against real connects on the loopback of a private network namespace (IPv4,
// IPv6, v4-mapped): a client of known PID connects to a listening port, to a closed one
// (refused) and to the first again; exactly those three appear, in order, with their
// destination ports; -P keeps one port's; -c counts per destination.
#include "live.hpp"
#include "net_namespace.hpp"
#include "tcp_tools.hpp"

#include <chrono>
#include <regex>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::Inet;
using tpkit::live::TcpEvent;

namespace {

constexpr std::uint16_t connect_open_port = 5004, connect_closed_port = 5005;
constexpr std::size_t connect_request = 10, connect_reply = 20; // bytes each connection carries

constexpr std::size_t tcpconnect_links = 1; // inet_sock_set_state

// The client's connects: to the open port, the closed one, the open one again.
const std::vector<std::uint16_t> connect_ports{connect_open_port, connect_closed_port,
                                               connect_open_port};
constexpr std::size_t connects_made = 3, connects_to_open_port = 2, connects_to_closed_port = 1;

tpkit::live::TcpClientRun connect_three_times(const tpkit::live::NetNamespace& ns, Inet inet)
{
    tpkit::live::TcpServer server(ns, inet, connect_open_port, connects_to_open_port, connect_request,
                                  connect_reply);
    server.start();
    auto client =
        tpkit::live::run_tcp_client(ns, inet, connect_ports, connect_request, connect_reply);
    EXPECT_EQ(server.wait(), 0);
    EXPECT_EQ(client.status, 0);
    EXPECT_EQ(client.results.size(), connects_made);
    if (client.results.size() == connects_made) {
        EXPECT_GT(client.results[0], 0);
        EXPECT_EQ(client.results[1], -ECONNREFUSED);
        EXPECT_GT(client.results[2], 0);
    }
    return client;
}

void expect_exact_connects(Inet inet)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::start_tcp_tool("tcpconnect", {}, ns);
    auto client = connect_three_times(ns, inet);
    std::size_t seen = 0;
    ASSERT_TRUE(tool->wait_for_line(
        [&](const std::string& line) {
            return (seen += tpkit::live::parse_flat_json(line)["pid"] == std::to_string(client.pid)) ==
                   connects_made;
        },
        10s))
        << tool->stderr_text();
    auto connects = tpkit::live::of_pid(tpkit::live::stop_and_take_events(*tool), client.pid);
    ASSERT_EQ(connects.size(), connects_made);
    for (std::size_t i = 0; i < connects.size(); i++) {
        SCOPED_TRACE("connect " + std::to_string(i));
        const TcpEvent& e = connects[i];
        EXPECT_EQ(e.at("tid"), std::to_string(client.pid));
        EXPECT_EQ(e.at("comm"), "tpk-client");
        EXPECT_EQ(e.at("uid"), std::to_string(getuid()));
        EXPECT_EQ(e.at("ip"), std::to_string(tpkit::live::ip_version(inet)));
        EXPECT_EQ(e.at("saddr"), tpkit::live::loopback_text(inet));
        EXPECT_EQ(e.at("daddr"), tpkit::live::loopback_text(inet));
        EXPECT_EQ(e.at("dport"), std::to_string(connect_ports[i]));
    }
}

} // namespace

TEST(TcpconnectExact, ThreeIpv4ConnectsOneRefused) { expect_exact_connects(Inet::v4); }

TEST(TcpconnectExact, ThreeIpv6ConnectsOneRefused) { expect_exact_connects(Inet::v6); }

TEST(TcpconnectExact, ThreeV4MappedConnectsOneRefused) { expect_exact_connects(Inet::v4_mapped); }

// -P: only the connect to the closed port.
TEST(TcpconnectExact, PortKeepsOnlyConnectsToIt)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    tpkit::live::ToolRun tool({tpkit::live::tool_path("tcpconnect"), "--json", "-P", std::to_string(connect_closed_port)});
    ASSERT_TRUE(tool.wait_until_attached(tcpconnect_links, 10s)) << tool.stderr_text();
    auto client = connect_three_times(ns, Inet::v4);
    ASSERT_TRUE(tool.wait_for_line(
        [&](const std::string& line) { return tpkit::live::parse_flat_json(line)["pid"] == std::to_string(client.pid); },
        10s))
        << tool.stderr_text();
    auto events = tpkit::live::stop_and_take_events(tool);
    ASSERT_EQ(events.size(), connects_to_closed_port);
    EXPECT_EQ(events[0].at("dport"), std::to_string(connect_closed_port));
}

// -c: at the end, the connects per destination: two to the open port, one to the closed one.
TEST(TcpconnectExact, CountPerDestination)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    tpkit::live::ToolRun tool({tpkit::live::tool_path("tcpconnect"), "--json", "-c", "-P",
                               std::to_string(connect_open_port) + "," + std::to_string(connect_closed_port)});
    ASSERT_TRUE(tool.wait_until_attached(tcpconnect_links, 10s)) << tool.stderr_text();
    connect_three_times(ns, Inet::v4);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    auto row = [](std::uint16_t port, std::size_t connects) {
        return "{\"type\":\"count\",\"saddr\":\"127.0.0.1\",\"daddr\":\"127.0.0.1\",\"dport\":" +
               std::to_string(port) + ",\"connects\":" + std::to_string(connects) + "}";
    };
    std::vector<std::string> expected{
        row(connect_open_port, connects_to_open_port),
        row(connect_closed_port, connects_to_closed_port),
        "{\"type\":\"lost\",\"lost_events\":0}",
    };
    // The rows' time_ns is when they were read: any.
    std::vector<std::string> lines;
    for (const auto& line : tool.lines())
        lines.push_back(std::regex_replace(line, std::regex(R"("time_ns":[0-9]+,)"), ""));
    EXPECT_EQ(lines, expected);
}
