// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpdrop against real drops on the loopback of a private network namespace: a client of known
// PID connects N times to a port nobody listens on; the kernel drops each SYN for want of a
// socket (and answers with a reset: the connects are refused). Exactly N drops must show for
// that port, named NO_SOCKET from the running kernel's BTF (its number differs between 6.1 and
// 6.18), with the SYN's addresses and ports, no socket state, and a distinct source port each.
#include "live.hpp"
#include "net_namespace.hpp"
#include "tcp_tools.hpp"

#include <cerrno>
#include <chrono>
#include <set>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::Inet;
using tpkit::live::TcpEvent;

namespace {

constexpr std::uint16_t closed_port = 5021;
constexpr int connects = 3;

void expect_exact_drops(Inet inet, const std::vector<std::string>& args)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::start_tcp_tool("tcpdrop", args, ns);
    auto client = tpkit::live::run_tcp_client(
        ns, inet, std::vector<std::uint16_t>(connects, closed_port), 0, 0);
    ASSERT_EQ(client.status, 0);
    ASSERT_EQ(client.results, std::vector<int>(connects, -ECONNREFUSED));
    const std::string port = std::to_string(closed_port);
    int seen = 0;
    ASSERT_TRUE(tool->wait_for_line(
        [&](const std::string& line) {
            return (seen += tpkit::live::parse_flat_json(line)["dport"] == port) == connects;
        },
        tpkit::live::patient(10s)))
        << tool->stderr_text();
    std::vector<TcpEvent> drops;
    for (auto& e : tpkit::live::stop_and_take_events(*tool))
        if (e["dport"] == port)
            drops.push_back(e);
    ASSERT_EQ(drops.size(), std::size_t(connects));
    const std::string address = tpkit::live::loopback_text(inet == Inet::v4_mapped ? Inet::v4 : inet);
    std::set<std::string> source_ports;
    for (const TcpEvent& e : drops) {
        EXPECT_EQ(e.at("reason"), "NO_SOCKET");
        EXPECT_EQ(e.at("ip"), inet == Inet::v6 ? "6" : "4"); // a v4-mapped socket sends IPv4
        EXPECT_EQ(e.at("saddr"), address);
        EXPECT_EQ(e.at("daddr"), address);
        EXPECT_EQ(e.at("tcp_flags"), "SYN");
        EXPECT_EQ(e.at("state"), "null"); // no socket
        EXPECT_TRUE(tpkit::live::is_number(e.at("sport")) && e.at("sport") != "0") << e.at("sport");
        source_ports.insert(e.at("sport"));
        if (args.empty())
            EXPECT_EQ(e.count("kernel_stack"), 0u);
        else
            EXPECT_NE(e.at("kernel_stack").find("tcp_v"), std::string::npos) << e.at("kernel_stack");
    }
    EXPECT_EQ(source_ports.size(), std::size_t(connects));
}

} // namespace

TEST(TcpdropExact, Ipv4SynsToAClosedPort) { expect_exact_drops(Inet::v4, {}); }

TEST(TcpdropExact, Ipv6SynsToAClosedPort) { expect_exact_drops(Inet::v6, {}); }

TEST(TcpdropExact, V4MappedSynsToAClosedPort) { expect_exact_drops(Inet::v4_mapped, {}); }

// -s: each drop's kernel stack, which passes through the TCP receive path (tcp_v4_rcv).
TEST(TcpdropExact, StackShowsTheTcpReceivePath) { expect_exact_drops(Inet::v4, {"-s"}); }
