// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// solisten against real listen() calls in a private network namespace (IPv4, IPv6, v4-mapped):
// a process of known PID listens with backlog 17 on a bound socket and on an unbound one (the
// kernel picks its port), fails to listen on a port another socket listens on (EADDRINUSE), on a
// UDP socket and on a pipe, and listens again with a backlog above net.core.somaxconn. Exactly
// the TCP listens appear, in order, with the results, ports and backlogs the process saw.
#include "live.hpp"
#include "net_namespace.hpp"
#include "tcp_tools.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

using tpkit::live::bind_loopback;
using tpkit::live::Inet;
using tpkit::live::TcpEvent;

namespace {

constexpr std::uint16_t listen_port = 5010, shared_port = 5011;
constexpr int backlog = 17, huge_backlog = 1 << 20;

// What the process saw: the port the kernel gave the unbound socket, and somaxconn.
struct ListenReport {
    int picked_port = 0;
    int somaxconn = 0;
};

// The namespace's net.core.somaxconn, read without allocating (in a forked child); -1 on error.
int read_somaxconn()
{
    char text[32] = {};
    int fd = open("/proc/sys/net/core/somaxconn", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    int value = 0;
    for (ssize_t i = 0; i < n && text[i] >= '0' && text[i] <= '9'; i++)
        value = value * 10 + (text[i] - '0');
    return n > 0 ? value : -1;
}

int stream_socket(Inet inet, bool reuse)
{
    int on = 1;
    int fd = socket(tpkit::live::family_of(inet), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && reuse && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0)
        return -1;
    return fd;
}

// The listens described above; 0 when each went as expected, else the step that did not.
int listen_script(Inet inet, int report_fd)
{
    ListenReport report;
    int bound = stream_socket(inet, false);
    if (bound < 0 || !bind_loopback(bound, inet, listen_port) || listen(bound, backlog) != 0)
        return 10;
    int unbound = stream_socket(inet, false);
    sockaddr_storage local;
    socklen_t local_length = sizeof(local);
    if (unbound < 0 || listen(unbound, backlog) != 0 ||
        getsockname(unbound, reinterpret_cast<sockaddr*>(&local), &local_length) != 0)
        return 11;
    report.picked_port = tpkit::live::port_of(local);
    // Both bound with SO_REUSEADDR: the second cannot listen once the first does.
    int first = stream_socket(inet, true), second = stream_socket(inet, true);
    if (first < 0 || second < 0 || !bind_loopback(first, inet, shared_port) ||
        !bind_loopback(second, inet, shared_port) || listen(first, backlog) != 0)
        return 12;
    if (listen(second, backlog) != -1 || errno != EADDRINUSE)
        return 13;
    int udp = socket(tpkit::live::family_of(inet), SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (udp < 0 || listen(udp, backlog) != -1 || errno != EOPNOTSUPP)
        return 14;
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0 || listen(pipe_fds[0], backlog) != -1 || errno != ENOTSOCK)
        return 15;
    report.somaxconn = read_somaxconn();
    if (report.somaxconn <= 0 || listen(bound, huge_backlog) != 0)
        return 16;
    return write(report_fd, &report, sizeof(report)) == sizeof(report) ? 0 : 17;
}

// The script under `solisten --json -p CHILD ARGS`: the child's events, and what it saw.
std::vector<TcpEvent> run_listen_script(Inet inet, const std::vector<std::string>& args,
                                        std::size_t expected, ListenReport& report)
{
    constexpr std::size_t links = 3; // sys_enter_listen, inet_sock_set_state, sys_exit_listen
    return tpkit::live::events_of_script(
        "solisten", args, links, "tpk-listen", [inet](int report_fd) { return listen_script(inet, report_fd); },
        expected, &report);
}

void expect_listen(const TcpEvent& e, Inet inet, int ret, int backlog_taken, int port, const std::string& addr)
{
    EXPECT_EQ(e.at("comm"), "tpk-listen");
    EXPECT_EQ(e.at("ret"), std::to_string(ret));
    EXPECT_EQ(e.at("backlog"), std::to_string(backlog_taken));
    EXPECT_EQ(e.at("proto"), "TCPv" + std::to_string(tpkit::live::ip_version(inet)));
    EXPECT_EQ(e.at("port"), std::to_string(port));
    EXPECT_EQ(e.at("addr"), addr);
}

void expect_exact_listens(Inet inet)
{
    TPKIT_REQUIRE_LIVE();
    ListenReport report;
    // The script's listens of TCP sockets (not the UDP socket's nor the pipe's): bound, unbound,
    // the two on shared_port, the first again.
    constexpr std::size_t tcp_listens = 5;
    auto events = run_listen_script(inet, {}, tcp_listens, report);
    ASSERT_EQ(events.size(), tcp_listens);
    const std::string loopback = tpkit::live::loopback_text(inet), any = inet == Inet::v4 ? "0.0.0.0" : "::";
    expect_listen(events[0], inet, 0, backlog, listen_port, loopback);
    expect_listen(events[1], inet, 0, backlog, report.picked_port, any);
    expect_listen(events[2], inet, 0, backlog, shared_port, loopback);
    expect_listen(events[3], inet, -EADDRINUSE, backlog, shared_port, loopback);
    expect_listen(events[4], inet, 0, report.somaxconn, listen_port, loopback);
}

} // namespace

TEST(SolistenExact, Ipv4Listens) { expect_exact_listens(Inet::v4); }

TEST(SolistenExact, Ipv6Listens) { expect_exact_listens(Inet::v6); }

TEST(SolistenExact, V4MappedListens) { expect_exact_listens(Inet::v4_mapped); }

// -P: only the listens on that port, the failed one included.
TEST(SolistenExact, PortKeepsOnlyListensOnIt)
{
    TPKIT_REQUIRE_LIVE();
    ListenReport report;
    constexpr std::size_t listens_on_shared_port = 2;
    auto events =
        run_listen_script(Inet::v4, {"-P", std::to_string(shared_port)}, listens_on_shared_port, report);
    ASSERT_EQ(events.size(), listens_on_shared_port);
    expect_listen(events[0], Inet::v4, 0, backlog, shared_port, "127.0.0.1");
    expect_listen(events[1], Inet::v4, -EADDRINUSE, backlog, shared_port, "127.0.0.1");
}
