// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Network traffic for live tests, only ever on the loopback of a private network namespace the
// test made: the namespace itself, and TCP servers and clients of known PIDs inside it.
#pragma once

#include "scripted_child.hpp"

#include <sys/socket.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tpkit::live {

// A private network namespace with its loopback up (127.0.0.1 and ::1), held by a child
// process: it goes away with that process on every exit path, and needs no mounts (unlike
// `ip netns add`).
class NetNamespace {
public:
    NetNamespace();
    ~NetNamespace();
    NetNamespace(const NetNamespace&) = delete;
    NetNamespace& operator=(const NetNamespace&) = delete;

    std::string path() const { return path_; }

    // In a child process: moves it into the namespace; false when it cannot.
    bool enter() const;

private:
    pid_t holder_ = -1;
    std::string path_;
};

// Which loopback a TCP connection uses: IPv4, IPv6, or an IPv6 socket on IPv4's loopback
// (v4-mapped, ::ffff:127.0.0.1).
enum class Inet { v4, v6, v4_mapped };

// The loopback address as the kernel prints it: 127.0.0.1, ::1, ::ffff:127.0.0.1.
std::string loopback_text(Inet inet);
// 4 or 6: the socket family as the TCP tools' IP column shows it.
unsigned ip_version(Inet inet);
// AF_INET or AF_INET6: the family of a socket on that loopback.
int family_of(Inet inet);
// The loopback at `port` as a socket address of that family; its length.
socklen_t loopback_address(Inet inet, std::uint16_t port, sockaddr_storage& storage);
// The port of a socket address (AF_INET or AF_INET6), host order.
std::uint16_t port_of(const sockaddr_storage& storage);
// Binds socket fd to the loopback at `port`; whether it could.
bool bind_loopback(int fd, Inet inet, std::uint16_t port);

// A TCP socket listening (backlog 1, SO_REUSEADDR) on the loopback at `port`, in the caller's
// network namespace; -1 when one of the steps fails. Raw system calls only (forked children).
int listen_on_loopback(Inet inet, std::uint16_t port);

// A counter of the namespace's own TCP MIB (the "Tcp:" lines of its /proc/net/snmp, IPv4 and
// IPv6 alike), such as "RetransSegs": what the kernel itself counted there.
std::uint64_t tcp_counter(const NetNamespace& ns, const std::string& name);

// A TCP server in the namespace, named "tpk-server": once made it listens on the loopback at
// `port` (with backlog 1); once started it accepts `connections` connections one after the
// other, on each reads `request` bytes, writes `reply` bytes, reads until the peer's end (the
// client closes first), closes; then it closes the listener and exits 0 (another code: which
// step failed).
class TcpServer {
public:
    TcpServer(const NetNamespace& ns, Inet inet, std::uint16_t port, int connections,
              std::size_t request, std::size_t reply);
    pid_t pid() const { return child_->pid(); }
    void start() { child_->go(); }
    // Its exit code.
    int wait() { return child_->wait(); }

private:
    int listener_ = -1;
    std::string reply_;
    std::unique_ptr<ScriptedChild> child_;
};

// What a client did: its PID and, per port it connected to in turn, the local port it had, or
// the connect's errno negated (-ECONNREFUSED); its exit code.
struct TcpClientRun {
    pid_t pid = -1;
    std::vector<int> results;
    int status = -1;
};

// A client in the namespace, named "tpk-client", that connects to the loopback at each port in
// turn and, when connected, sends `request` bytes, reads `reply` bytes and closes first.
TcpClientRun run_tcp_client(const NetNamespace& ns, Inet inet, const std::vector<std::uint16_t>& ports,
                            std::size_t request, std::size_t reply);

// One whole session on `port`: a server for one connection and a client. The client's run (its
// status 100 + the server's exit code when the server failed); the server's PID into *server_pid.
TcpClientRun run_tcp_session(const NetNamespace& ns, Inet inet, std::uint16_t port,
                             std::size_t request, std::size_t reply, pid_t* server_pid = nullptr);

} // namespace tpkit::live
