// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpstates against one real TCP connection on the loopback of a private network namespace
// (IPv4, IPv6, and an IPv6 socket on IPv4's loopback): the exact state sequence of the client's
// socket, the server's listening socket and the one it accepted, each change with its
// addresses and ports, the task that made it where a task makes it, and how long the socket
// was in the state it left.
#include "live.hpp"
#include "net_namespace.hpp"
#include "tcp_tools.hpp"

#include <sys/utsname.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::Inet;
using tpkit::live::TcpEvent;

namespace {

constexpr std::uint16_t states_server_port = 5001;
constexpr std::size_t states_request = 100, states_reply = 200; // bytes the session carries
constexpr int states_connections = 1; // what the server accepts: one session

// Whether the running kernel is this version or a later one.
bool kernel_at_least(int major, int minor)
{
    utsname name{};
    int running_major = 0, running_minor = 0;
    if (uname(&name) != 0 || std::sscanf(name.release, "%d.%d", &running_major, &running_minor) != 2)
        throw std::runtime_error("cannot read the kernel's version");
    return running_major > major || (running_major == major && running_minor >= minor);
}

// One expected change of one socket. pid: the task that makes it (connect, listen, close), or
// 0 where a packet's arrival does (softirq: whichever task it interrupted).
struct Change {
    std::string oldstate, newstate;
    pid_t pid;
};

// The events of one socket's life (up to its TCP_CLOSE), the socket being the one of the first
// event `match` accepts: its kernel address alone is not enough, as the memory of a closed socket
// is soon another's.
template <class Match>
std::vector<TcpEvent> life_of(const std::vector<TcpEvent>& events, Match match)
{
    std::size_t found = 0;
    while (found < events.size() && !match(events[found]))
        found++;
    if (found == events.size())
        return {};
    const std::string skaddr = events[found].at("skaddr");
    std::size_t first = found;
    for (std::size_t i = found; i-- > 0;) {
        if (events[i].at("skaddr") != skaddr)
            continue;
        if (events[i].at("newstate") == "CLOSE")
            break;
        first = i;
    }
    std::vector<TcpEvent> life;
    for (std::size_t i = first; i < events.size(); i++) {
        if (events[i].at("skaddr") != skaddr)
            continue;
        life.push_back(events[i]);
        if (events[i].at("newstate") == "CLOSE")
            break;
    }
    return life;
}

// A socket's events are exactly `changes`; every event after the first has the full tuple
// (local, remote); the first has what the kernel has set by then (`first_local_port`,
// `first_remote`, `first_remote_port`). The time in the old state is known from the second
// change on.
void expect_changes(const std::vector<TcpEvent>& events, const std::vector<Change>& changes,
                    const std::string& local, const std::string& local_port,
                    const std::string& remote, const std::string& remote_port,
                    const std::string& first_local_port, const std::string& first_remote,
                    const std::string& first_remote_port, unsigned ip)
{
    ASSERT_EQ(events.size(), changes.size());
    for (std::size_t i = 0; i < events.size(); i++) {
        const TcpEvent& e = events[i];
        SCOPED_TRACE("change " + std::to_string(i) + ": " + e.at("oldstate") + " -> " + e.at("newstate"));
        EXPECT_EQ(e.at("oldstate"), changes[i].oldstate);
        EXPECT_EQ(e.at("newstate"), changes[i].newstate);
        if (changes[i].pid) {
            EXPECT_EQ(e.at("pid"), std::to_string(changes[i].pid));
        }
        EXPECT_EQ(e.at("ip"), std::to_string(ip));
        EXPECT_EQ(e.at("laddr"), local);
        EXPECT_EQ(e.at("lport"), i ? local_port : first_local_port);
        EXPECT_EQ(e.at("raddr"), i ? remote : first_remote);
        EXPECT_EQ(e.at("rport"), i ? remote_port : first_remote_port);
        if (i == 0) {
            EXPECT_EQ(e.at("old_state_ns"), "null");
        } else {
            EXPECT_TRUE(tpkit::live::is_number(e.at("old_state_ns"))) << e.at("old_state_ns");
        }
    }
}

void expect_exact_states(Inet inet)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    auto tool = tpkit::live::start_tcp_tool("tcpstates", {}, ns);

    tpkit::live::TcpServer server(ns, inet, states_server_port, states_connections, states_request,
                                  states_reply);
    server.start();
    auto client =
        tpkit::live::run_tcp_client(ns, inet, {states_server_port}, states_request, states_reply);
    ASSERT_EQ(server.wait(), 0);
    ASSERT_EQ(client.status, 0);
    ASSERT_EQ(client.results.size(), 1u);
    ASSERT_GT(client.results[0], 0) << "connect failed";

    const std::string address = tpkit::live::loopback_text(inet);
    const std::string any = inet == Inet::v4 ? "0.0.0.0" : "::";
    const std::string port = std::to_string(states_server_port), client_port = std::to_string(client.results[0]);
    // The last change of each of the three sockets.
    const std::size_t sockets = 3; // the client's, the listener, the one it accepted
    std::set<std::string> ends;
    ASSERT_TRUE(tool->wait_for_line(
        [&](const std::string& line) {
            TcpEvent e = tpkit::live::parse_flat_json(line);
            if (e["newstate"] != "CLOSE")
                return false;
            if (e["oldstate"] == "FIN_WAIT2" && e["lport"] == client_port)
                ends.insert("client");
            if (e["oldstate"] == "LAST_ACK" && e["lport"] == port && e["rport"] == client_port)
                ends.insert("accepted");
            if (e["oldstate"] == "LISTEN" && e["lport"] == port)
                ends.insert("listener");
            return ends.size() == sockets;
        },
        10s))
        << "ends seen: " << ends.size() << "; stderr: " << tool->stderr_text();
    auto events = tpkit::live::stop_and_take_events(*tool);

    const auto client_life = life_of(events, [&](const TcpEvent& e) {
        return e.at("newstate") == "SYN_SENT" && e.at("pid") == std::to_string(client.pid);
    });
    const auto listener_life = life_of(events, [&](const TcpEvent& e) {
        return e.at("newstate") == "LISTEN" && e.at("lport") == port;
    });
    const auto accepted_life = life_of(events, [&](const TcpEvent& e) {
        return e.at("newstate") == "LAST_ACK" && e.at("rport") == client_port;
    });
    const unsigned ip = tpkit::live::ip_version(inet);
    {
        SCOPED_TRACE("client");
        // connect() picks the local port after its SYN_SENT change.
        expect_changes(client_life,
                       {{"CLOSE", "SYN_SENT", client.pid},
                        {"SYN_SENT", "ESTABLISHED", 0},
                        {"ESTABLISHED", "FIN_WAIT1", client.pid},
                        {"FIN_WAIT1", "FIN_WAIT2", 0},
                        {"FIN_WAIT2", "CLOSE", 0}},
                       address, client_port, address, port, "0", address, port, ip);
    }
    {
        SCOPED_TRACE("listener");
        expect_changes(listener_life,
                       {{"CLOSE", "LISTEN", server.pid()}, {"LISTEN", "CLOSE", server.pid()}},
                       address, port, any, "0", port, any, "0", ip);
    }
    {
        SCOPED_TRACE("accepted");
        // A clone of the listener. "inet: consolidate inet_csk_clone_lock()" (6.15) sets its peer
        // before its SYN_RECV change; before it, that change shows the listener's.
        const bool peer_set = kernel_at_least(6, 15);
        expect_changes(accepted_life,
                       {{"LISTEN", "SYN_RECV", 0},
                        {"SYN_RECV", "ESTABLISHED", 0},
                        {"ESTABLISHED", "CLOSE_WAIT", 0},
                        {"CLOSE_WAIT", "LAST_ACK", server.pid()},
                        {"LAST_ACK", "CLOSE", 0}},
                       address, port, address, client_port, port, peer_set ? address : any,
                       peer_set ? client_port : "0", ip);
    }
}

} // namespace

TEST(TcpstatesExact, EveryChangeOfOneIpv4Connection) { expect_exact_states(Inet::v4); }

TEST(TcpstatesExact, EveryChangeOfOneIpv6Connection) { expect_exact_states(Inet::v6); }

TEST(TcpstatesExact, EveryChangeOfOneV4MappedConnection) { expect_exact_states(Inet::v4_mapped); }
