// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpdrop against real drops on the loopback of a private network namespace: a client of known
// PID connects N times to a port nobody listens on; the kernel drops each SYN for want of a
// socket (and answers with a reset: the connects are refused). Exactly N drops must show for
// that port, named NO_SOCKET from the running kernel's BTF (its number differs between 6.1 and
// 6.18), with the SYN's addresses and ports, no socket state, and a distinct source port each.
// And a drop on a failure path of the socket's own: a listener closed while a connection it never
// accepted holds unread data purges that data (QUEUE_PURGE where the kernel names it so, else
// NOT_SPECIFIED, which only --all-reasons shows): exactly that one segment must show.
#include "live.hpp"
#include "net_namespace.hpp"
#include "scripted_child.hpp"
#include "tcp_tools.hpp"

#include "tpkit/kernel/core_btf.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <set>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::Inet;
using tpkit::live::TcpEvent;

namespace {

constexpr std::uint16_t drop_closed_port = 5021, drop_purged_port = 5023;
constexpr int connects = 3;

void expect_exact_drops(Inet inet, const std::vector<std::string>& args)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::start_tcp_tool("tcpdrop", args, ns);
    auto client = tpkit::live::run_tcp_client(
        ns, inet, std::vector<std::uint16_t>(connects, drop_closed_port), 0, 0);
    ASSERT_EQ(client.status, 0);
    ASSERT_EQ(client.results, std::vector<int>(connects, -ECONNREFUSED));
    const std::string port = std::to_string(drop_closed_port);
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

TEST(TcpdropExact, UnreadDataOfAConnectionNeverAcceptedIsPurged)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::start_tcp_tool("tcpdrop", {"--all-reasons"}, ns);
    int listener = -1, client = -1;
    tpkit::live::ScriptedChild child(
        "tpk-purged",
        [&] {
            if (!ns.enter())
                return 1;
            listener = tpkit::live::listen_on_loopback(Inet::v4, drop_purged_port);
            client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_storage address;
            socklen_t length = tpkit::live::loopback_address(Inet::v4, drop_purged_port, address);
            if (listener < 0 || client < 0 || connect(client, reinterpret_cast<sockaddr*>(&address), length) != 0)
                return 2;
            return 0;
        },
        [&] {
            // On the loopback the segment is in the new connection's receive queue once write()
            // returns; closing the listener destroys that connection, and the data with it.
            char data[100] = {};
            if (write(client, data, sizeof(data)) != ssize_t(sizeof(data)))
                return 3;
            close(listener);
            close(client);
            return 0;
        });
    ASSERT_EQ(child.go_and_wait(), 0);
    const std::string port = std::to_string(drop_purged_port);
    auto purged = [&](const TcpEvent& e) {
        // The data segment: the handshake's last ACK is freed too, as NOT_SPECIFIED on 6.1.
        return e.count("dport") && e.at("dport") == port && e.at("tcp_flags") == "PSH|ACK";
    };
    tool->wait_for_line([&](const std::string& line) { return purged(tpkit::live::parse_flat_json(line)); },
                        tpkit::live::patient(10s));
    std::vector<TcpEvent> drops;
    for (auto& e : tpkit::live::stop_and_take_events(*tool))
        if (purged(e))
            drops.push_back(e);
    ASSERT_EQ(drops.size(), 1u) << tool->stderr_text();
    const auto reasons = tpkit::kernel_enum_values("skb_drop_reason");
    bool named = false;
    for (const auto& [value, name] : reasons.value_or(std::map<std::int64_t, std::string>{}))
        named = named || name == "SKB_DROP_REASON_QUEUE_PURGE";
    EXPECT_EQ(drops[0].at("reason"), named ? "QUEUE_PURGE" : "NOT_SPECIFIED");
    EXPECT_EQ(drops[0].at("saddr"), "127.0.0.1");
    EXPECT_EQ(drops[0].at("daddr"), "127.0.0.1");
}
