// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "net_namespace.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tpkit::live {

namespace {

bool loopback_up()
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    bool up = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
    ifr.ifr_flags |= IFF_UP;
    up = up && ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
    close(fd);
    return up;
}

bool write_all(int fd, const char* data, std::size_t size)
{
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n <= 0)
            return false;
        data += n;
        size -= std::size_t(n);
    }
    return true;
}

// Reads exactly `size` bytes (into a small buffer, over and over).
bool read_exactly(int fd, std::size_t size)
{
    char buffer[4096];
    while (size > 0) {
        ssize_t n = read(fd, buffer, std::min(size, sizeof(buffer)));
        if (n <= 0)
            return false;
        size -= std::size_t(n);
    }
    return true;
}

bool read_until_end(int fd)
{
    char buffer[4096];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0) {
    }
    return n == 0;
}

} // namespace

NetNamespace::NetNamespace()
{
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    holder_ = fork();
    if (holder_ < 0)
        throw std::runtime_error("fork failed");
    if (holder_ == 0) {
        close(ready[0]);
        if (unshare(CLONE_NEWNET) != 0 || !loopback_up())
            _exit(1);
        char ok = 1;
        if (write(ready[1], &ok, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char ok = 0;
    bool up = read(ready[0], &ok, 1) == 1 && ok == 1;
    close(ready[0]);
    path_ = "/proc/" + std::to_string(holder_) + "/ns/net";
    if (!up) {
        kill(holder_, SIGKILL);
        waitpid(holder_, nullptr, 0);
        throw std::runtime_error("cannot make a network namespace");
    }
}

NetNamespace::~NetNamespace()
{
    kill(holder_, SIGKILL);
    waitpid(holder_, nullptr, 0);
}

bool NetNamespace::enter() const
{
    int ns = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    bool entered = ns >= 0 && setns(ns, CLONE_NEWNET) == 0;
    if (ns >= 0)
        close(ns);
    return entered;
}

std::string loopback_text(Inet inet)
{
    switch (inet) {
    case Inet::v4:
        return "127.0.0.1";
    case Inet::v6:
        return "::1";
    case Inet::v4_mapped:
        break;
    }
    return "::ffff:127.0.0.1";
}

unsigned ip_version(Inet inet) { return inet == Inet::v4 ? 4 : 6; }

socklen_t loopback_address(Inet inet, std::uint16_t port, sockaddr_storage& storage)
{
    storage = {};
    if (inet == Inet::v4) {
        auto& a = reinterpret_cast<sockaddr_in&>(storage);
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return sizeof(a);
    }
    auto& a = reinterpret_cast<sockaddr_in6&>(storage);
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    inet_pton(AF_INET6, inet == Inet::v6 ? "::1" : "::ffff:127.0.0.1", &a.sin6_addr);
    return sizeof(a);
}

int family_of(Inet inet) { return inet == Inet::v4 ? AF_INET : AF_INET6; }

std::uint16_t port_of(const sockaddr_storage& storage)
{
    return ntohs(storage.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(storage).sin_port
                                              : reinterpret_cast<const sockaddr_in6&>(storage).sin6_port);
}

bool bind_loopback(int fd, Inet inet, std::uint16_t port)
{
    sockaddr_storage address;
    socklen_t length = loopback_address(inet, port, address);
    return bind(fd, reinterpret_cast<sockaddr*>(&address), length) == 0;
}

int listen_on_loopback(Inet inet, std::uint16_t port)
{
    int on = 1;
    int fd = socket(family_of(inet), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == 0 &&
        bind_loopback(fd, inet, port) && listen(fd, 1) == 0)
        return fd;
    if (fd >= 0)
        close(fd);
    return -1;
}

std::uint64_t tcp_counter(const NetNamespace& ns, const std::string& name)
{
    // /proc/PID/net is the network namespace of PID: the holder's, whatever the reader's own.
    std::string path = ns.path();
    path.replace(path.rfind("ns/net"), 6, "net/snmp");
    std::ifstream snmp(path);
    std::string names, values;
    while (std::getline(snmp, names) && std::getline(snmp, values)) {
        if (!names.starts_with("Tcp:"))
            continue;
        std::istringstream n(names), v(values);
        for (std::string key, value; n >> key && v >> value;)
            if (key == name)
                return std::stoull(value);
    }
    throw std::runtime_error("no Tcp: " + name + " in " + path);
}

TcpServer::TcpServer(const NetNamespace& ns, Inet inet, std::uint16_t port, int connections,
                     std::size_t request, std::size_t reply)
    : reply_(reply, 'r')
{
    auto prepare = [this, &ns, inet, port] {
        if (!ns.enter())
            return 1;
        listener_ = listen_on_loopback(inet, port);
        return listener_ >= 0 ? 0 : 2;
    };
    auto act = [this, connections, request] {
        for (int i = 0; i < connections; i++) {
            int fd = accept(listener_, nullptr, nullptr);
            if (fd < 0)
                return 5;
            if (!read_exactly(fd, request) || !write_all(fd, reply_.data(), reply_.size()))
                return 6;
            if (!read_until_end(fd))
                return 7;
            close(fd);
        }
        close(listener_);
        return 0;
    };
    child_ = std::make_unique<ScriptedChild>("tpk-server", prepare, act);
}

TcpClientRun run_tcp_client(const NetNamespace& ns, Inet inet, const std::vector<std::uint16_t>& ports,
                            std::size_t request, std::size_t reply)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    const std::string data(request, 'q');
    auto act = [&] {
        for (std::uint16_t port : ports) {
            sockaddr_storage address, local;
            socklen_t length = loopback_address(inet, port, address), local_length = sizeof(local);
            int fd = socket(family_of(inet), SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd < 0)
                return 2;
            int result;
            if (connect(fd, reinterpret_cast<sockaddr*>(&address), length) != 0)
                result = -errno;
            else if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) != 0)
                return 3;
            else
                result = port_of(local);
            if (result > 0 && (!write_all(fd, data.data(), data.size()) || !read_exactly(fd, reply)))
                return 4;
            close(fd);
            if (write(report[1], &result, sizeof(result)) != sizeof(result))
                return 5;
        }
        return 0;
    };
    TcpClientRun run;
    {
        ScriptedChild client("tpk-client", [&] { return ns.enter() ? 0 : 1; }, act);
        run.pid = client.pid();
        run.status = client.go_and_wait();
    }
    close(report[1]);
    int result;
    while (read(report[0], &result, sizeof(result)) == sizeof(result))
        run.results.push_back(result);
    close(report[0]);
    return run;
}

TcpClientRun run_tcp_session(const NetNamespace& ns, Inet inet, std::uint16_t port,
                             std::size_t request, std::size_t reply, pid_t* server_pid)
{
    TcpServer server(ns, inet, port, 1, request, reply);
    server.start();
    TcpClientRun run = run_tcp_client(ns, inet, {port}, request, reply);
    if (server_pid)
        *server_pid = server.pid();
    int server_status = server.wait();
    if (server_status != 0)
        run.status = 100 + server_status;
    return run;
}

} // namespace tpkit::live
