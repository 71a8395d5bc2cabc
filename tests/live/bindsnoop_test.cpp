// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// bindsnoop against real bind() calls in a private network namespace, TCP and UDP, IPv4, IPv6
// and v4-mapped: a process of known PID binds a socket with SO_REUSEADDR, bound to the loopback
// device, to a known port; a second socket to the same port (EADDRINUSE); a third with
// IP_FREEBIND and SO_REUSEPORT to port 0 (the kernel picks one); an AF_UNIX socket and a pipe
// (no events). Exactly the IPv4 and IPv6 binds appear, in order, with the results, options,
// device and ports the process saw; failed ones only with -x.
#include "live.hpp"
#include "net_namespace.hpp"
#include "tcp_tools.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

using tpkit::live::bind_loopback;
using tpkit::live::Inet;
using tpkit::live::TcpEvent;

namespace {

constexpr std::uint16_t bind_port = 5020;

// The script's binds of IPv4 or IPv6 sockets: two to bind_port (the second fails, EADDRINUSE),
// one to port 0. The others (AF_UNIX, a pipe) are none of bindsnoop's.
constexpr std::size_t inet_binds = 3;
constexpr std::size_t successful_binds = 2;
constexpr std::size_t binds_to_bind_port = 2;

// What the process saw: the loopback's interface index and the port the kernel picked.
struct BindReport {
    int loopback_index = 0;
    int picked_port = 0;
};

bool set_option(int fd, int level, int name)
{
    int on = 1;
    return setsockopt(fd, level, name, &on, sizeof(on)) == 0;
}

// The binds described above; 0 when each went as expected, else the step that did not.
int bind_script(Inet inet, int type, int report_fd)
{
    const int family = tpkit::live::family_of(inet);
    BindReport report;
    report.loopback_index = int(if_nametoindex("lo"));
    int first = socket(family, type | SOCK_CLOEXEC, 0);
    if (first < 0 || report.loopback_index <= 0 || !set_option(first, SOL_SOCKET, SO_REUSEADDR) ||
        setsockopt(first, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3) != 0 || !bind_loopback(first, inet, bind_port))
        return 10;
    int second = socket(family, type | SOCK_CLOEXEC, 0);
    if (second < 0 || bind_loopback(second, inet, bind_port) || errno != EADDRINUSE)
        return 11;
    int third = socket(family, type | SOCK_CLOEXEC, 0);
    sockaddr_storage local;
    socklen_t local_length = sizeof(local);
    bool freebind = family == AF_INET ? set_option(third, SOL_IP, IP_FREEBIND)
                                      : set_option(third, SOL_IPV6, IPV6_FREEBIND);
    if (third < 0 || !freebind || !set_option(third, SOL_SOCKET, SO_REUSEPORT) ||
        !bind_loopback(third, inet, 0) ||
        getsockname(third, reinterpret_cast<sockaddr*>(&local), &local_length) != 0)
        return 12;
    report.picked_port = tpkit::live::port_of(local);
    // An abstract AF_UNIX address: nothing left in the file system.
    sockaddr_un unix_address{};
    unix_address.sun_family = AF_UNIX;
    std::memcpy(unix_address.sun_path + 1, "tpk-bind", 8);
    int unix_socket = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (unix_socket < 0 ||
        bind(unix_socket, reinterpret_cast<sockaddr*>(&unix_address), offsetof(sockaddr_un, sun_path) + 9) != 0)
        return 13;
    int pipe_fds[2];
    sockaddr_storage address;
    socklen_t length = tpkit::live::loopback_address(inet, bind_port, address);
    if (pipe2(pipe_fds, O_CLOEXEC) != 0 ||
        bind(pipe_fds[0], reinterpret_cast<sockaddr*>(&address), length) != -1 || errno != ENOTSOCK)
        return 14;
    return write(report_fd, &report, sizeof(report)) == sizeof(report) ? 0 : 15;
}

// The script under `bindsnoop --json -p CHILD ARGS`: the child's events, and what it saw.
std::vector<TcpEvent> run_bind_script(Inet inet, int type, const std::vector<std::string>& args,
                                      std::size_t expected, BindReport& report)
{
    constexpr std::size_t links = 2; // sys_enter_bind, sys_exit_bind
    return tpkit::live::events_of_script(
        "bindsnoop", args, links, "tpk-bind",
        [inet, type](int report_fd) { return bind_script(inet, type, report_fd); }, expected, &report);
}

struct Bind {
    int ret;
    const char* opts;
    int device;
    int port;
};

void expect_bind(const TcpEvent& e, Inet inet, int type, const Bind& b)
{
    EXPECT_EQ(e.at("comm"), "tpk-bind");
    EXPECT_EQ(e.at("ret"), std::to_string(b.ret));
    EXPECT_EQ(e.at("proto"), type == SOCK_STREAM ? "TCP" : "UDP");
    EXPECT_EQ(e.at("opts"), b.opts);
    EXPECT_EQ(e.at("if"), std::to_string(b.device));
    EXPECT_EQ(e.at("port"), std::to_string(b.port));
    EXPECT_EQ(e.at("addr"), tpkit::live::loopback_text(inet));
}

// With -x: the three binds, the failed one included.
void expect_exact_binds(Inet inet, int type)
{
    TPKIT_REQUIRE_LIVE();
    BindReport report;
    auto events = run_bind_script(inet, type, {"-x"}, inet_binds, report);
    ASSERT_EQ(events.size(), inet_binds);
    expect_bind(events[0], inet, type, {0, "...R.", report.loopback_index, bind_port});
    expect_bind(events[1], inet, type, {-EADDRINUSE, ".....", 0, bind_port});
    expect_bind(events[2], inet, type, {0, "F...r", 0, report.picked_port});
}

} // namespace

TEST(BindsnoopExact, TcpIpv4Binds) { expect_exact_binds(Inet::v4, SOCK_STREAM); }

TEST(BindsnoopExact, TcpIpv6Binds) { expect_exact_binds(Inet::v6, SOCK_STREAM); }

TEST(BindsnoopExact, UdpIpv4Binds) { expect_exact_binds(Inet::v4, SOCK_DGRAM); }

TEST(BindsnoopExact, UdpIpv6Binds) { expect_exact_binds(Inet::v6, SOCK_DGRAM); }

TEST(BindsnoopExact, UdpV4MappedBinds) { expect_exact_binds(Inet::v4_mapped, SOCK_DGRAM); }

// Without -x, as bcc: the successful binds only.
TEST(BindsnoopExact, FailedBindsOnlyWithX)
{
    TPKIT_REQUIRE_LIVE();
    BindReport report;
    auto events = run_bind_script(Inet::v4, SOCK_STREAM, {}, successful_binds, report);
    ASSERT_EQ(events.size(), successful_binds);
    expect_bind(events[0], Inet::v4, SOCK_STREAM, {0, "...R.", report.loopback_index, bind_port});
    expect_bind(events[1], Inet::v4, SOCK_STREAM, {0, "F...r", 0, report.picked_port});
}

// -P: only the binds to that port (the picked one is another).
TEST(BindsnoopExact, PortsKeepOnlyBindsToThem)
{
    TPKIT_REQUIRE_LIVE();
    BindReport report;
    auto events = run_bind_script(Inet::v6, SOCK_DGRAM, {"-x", "-P", std::to_string(bind_port)},
                                  binds_to_bind_port, report);
    ASSERT_EQ(events.size(), binds_to_bind_port);
    expect_bind(events[0], Inet::v6, SOCK_DGRAM, {0, "...R.", report.loopback_index, bind_port});
    expect_bind(events[1], Inet::v6, SOCK_DGRAM, {-EADDRINUSE, ".....", 0, bind_port});
}
