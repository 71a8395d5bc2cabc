// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcplife against real TCP sessions on the loopback of a private network namespace (IPv4,
// IPv6, v4-mapped): each side's session once, with its task, addresses, ports and the exact
// bytes it sent and received; a refused connect as a session of no bytes; -p keeps one task's.
#include "live.hpp"
#include "net_namespace.hpp"
#include "tcp_tools.hpp"

#include <time.h>

#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::Inet;
using tpkit::live::TcpEvent;

namespace {

constexpr std::uint16_t life_server_port = 5002, life_closed_port = 5003;
constexpr std::size_t life_request = 3000, life_reply = 70001; // the reply spans many segments
constexpr int life_connections = 1; // what the server accepts: one session

constexpr std::size_t tcplife_links = 1; // inet_sock_set_state

std::uint64_t monotonic_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::uint64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The events whose local and remote ports are these.
std::vector<TcpEvent> sessions(const std::vector<TcpEvent>& events, int local_port, int remote_port)
{
    std::vector<TcpEvent> out;
    for (const auto& e : events)
        if (e.at("lport") == std::to_string(local_port) && e.at("rport") == std::to_string(remote_port))
            out.push_back(e);
    return out;
}

void expect_session(const std::vector<TcpEvent>& found, pid_t pid, const std::string& comm, Inet inet,
                    std::size_t sent, std::size_t received, std::uint64_t longest_ns)
{
    std::string shown;
    for (const TcpEvent& e : found) {
        for (const auto& [name, value] : e)
            shown += name + "=" + value + " ";
        shown += "\n";
    }
    ASSERT_EQ(found.size(), 1u) << shown;
    const TcpEvent& e = found[0];
    EXPECT_EQ(e.at("pid"), std::to_string(pid));
    EXPECT_EQ(e.at("comm"), comm);
    EXPECT_EQ(e.at("ip"), std::to_string(tpkit::live::ip_version(inet)));
    EXPECT_EQ(e.at("laddr"), tpkit::live::loopback_text(inet));
    EXPECT_EQ(e.at("raddr"), tpkit::live::loopback_text(inet));
    EXPECT_EQ(e.at("tx_bytes"), std::to_string(sent));
    EXPECT_EQ(e.at("rx_bytes"), std::to_string(received));
    ASSERT_TRUE(tpkit::live::is_number(e.at("span_ns"))) << e.at("span_ns");
    EXPECT_GT(std::stoull(e.at("span_ns")), 0u);
    EXPECT_LE(std::stoull(e.at("span_ns")), longest_ns);
}

void expect_exact_sessions(Inet inet)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::start_tcp_tool("tcplife", {}, ns);

    const std::uint64_t start = monotonic_ns();
    tpkit::live::TcpServer server(ns, inet, life_server_port, life_connections, life_request, life_reply);
    server.start();
    const std::vector<std::uint16_t> ports{life_server_port, life_closed_port};
    auto client = tpkit::live::run_tcp_client(ns, inet, ports, life_request, life_reply);
    ASSERT_EQ(server.wait(), 0);
    const std::uint64_t took = monotonic_ns() - start;
    ASSERT_EQ(client.status, 0);
    ASSERT_EQ(client.results.size(), ports.size());
    ASSERT_GT(client.results[0], 0) << "connect failed";
    ASSERT_EQ(client.results[1], -ECONNREFUSED);
    const int client_port = client.results[0];

    // Both ends of the session, and the refused connect.
    constexpr int awaited = 3;
    int seen = 0;
    ASSERT_TRUE(tool->wait_for_line(
        [&](const std::string& line) {
            TcpEvent e = tpkit::live::parse_flat_json(line);
            seen += e["lport"] == std::to_string(client_port) || e["rport"] == std::to_string(client_port) ||
                    e["rport"] == std::to_string(life_closed_port);
            return seen == awaited;
        },
        10s))
        << tool->stderr_text();
    auto events = tpkit::live::stop_and_take_events(*tool);
    {
        SCOPED_TRACE("client");
        expect_session(sessions(events, client_port, life_server_port), client.pid, "tpk-client", inet,
                       life_request, life_reply, took);
    }
    {
        SCOPED_TRACE("server");
        expect_session(sessions(events, life_server_port, client_port), server.pid(), "tpk-server", inet,
                       life_reply, life_request, took);
    }
    {
        SCOPED_TRACE("refused");
        std::vector<TcpEvent> refused;
        for (const auto& e : events)
            if (e.at("rport") == std::to_string(life_closed_port))
                refused.push_back(e);
        ASSERT_EQ(refused.size(), 1u);
        EXPECT_EQ(refused[0].at("pid"), std::to_string(client.pid));
        EXPECT_EQ(refused[0].at("tx_bytes"), "0");
        EXPECT_EQ(refused[0].at("rx_bytes"), "0");
    }
}

} // namespace

TEST(TcplifeExact, BothEndsOfAnIpv4SessionWithTheirBytes) { expect_exact_sessions(Inet::v4); }

TEST(TcplifeExact, BothEndsOfAnIpv6SessionWithTheirBytes) { expect_exact_sessions(Inet::v6); }

TEST(TcplifeExact, BothEndsOfAV4MappedSessionWithTheirBytes) { expect_exact_sessions(Inet::v4_mapped); }

// -p: the server's session only, not its client's.
TEST(TcplifeExact, PidKeepsOnlyThatProcessesSessions)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    tpkit::live::TcpServer server(ns, Inet::v4, life_server_port, life_connections, life_request,
                                  life_reply);
    tpkit::live::ToolRun tool({tpkit::live::tool_path("tcplife"), "--json", "-p", std::to_string(server.pid())});
    ASSERT_TRUE(tool.wait_until_attached(tcplife_links, 10s)) << tool.stderr_text();
    server.start();
    auto client = tpkit::live::run_tcp_client(ns, Inet::v4, {life_server_port}, life_request, life_reply);
    ASSERT_EQ(server.wait(), 0);
    ASSERT_EQ(client.status, 0);
    ASSERT_EQ(client.results.size(), 1u);
    ASSERT_TRUE(tool.wait_for_line(
        [](const std::string& line) { return tpkit::live::parse_flat_json(line)["comm"] == "tpk-server"; },
        10s))
        << tool.stderr_text();
    auto events = tpkit::live::stop_and_take_events(tool);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].at("pid"), std::to_string(server.pid()));
    EXPECT_EQ(events[0].at("rport"), std::to_string(client.results[0]));
    EXPECT_EQ(events[0].at("tx_bytes"), std::to_string(life_reply));
}
