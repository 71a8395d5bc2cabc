// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A TCP flow on the loopback of a private network namespace that loses what it sends until it is
// repaired, so that the kernel retransmits: a socket filter on the receiving socket (classic
// BPF returning 0) drops what reaches it. A socket filter rather than an nftables rule: it needs
// no netfilter modules or nft binary (the 6.1 VM's initramfs has neither).
#pragma once

#include "net_namespace.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <thread>

namespace tpkit::live {

// Classic BPF socket filters. At a TCP socket's filter skb->data is the TCP header: byte 13
// holds its flags.
inline sock_filter drop_all[] = {{BPF_RET | BPF_K, 0, 0, 0}};
inline sock_filter keep_only_syns[] = {
    {BPF_LD | BPF_B | BPF_ABS, 0, 0, 13},
    {BPF_JMP | BPF_JSET | BPF_K, 0, 1, 0x02}, // SYN: keep, else drop
    {BPF_RET | BPF_K, 0, 0, 0xffffffff},
    {BPF_RET | BPF_K, 0, 0, 0},
};

template <std::size_t N>
bool attach_filter(int fd, sock_filter (&program)[N])
{
    sock_fprog fprog{static_cast<unsigned short>(N), program};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof(fprog)) == 0;
}

inline bool detach_filter(int fd)
{
    int unused = 0;
    return setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &unused, sizeof(unused)) == 0;
}

inline std::uint16_t local_port(int fd)
{
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0)
        return 0;
    return ntohs(local.ss_family == AF_INET ? reinterpret_cast<sockaddr_in&>(local).sin_port
                                            : reinterpret_cast<sockaddr_in6&>(local).sin6_port);
}

// One lossy flow in the namespace, in a child named "tpk-lossy": made when constructed, lossy
// once started, repaired by repair(); wait() gives the client's port.
class LossyFlow {
public:
    enum class Loss {
        data,      // an established flow; the server's socket drops everything
        handshake, // the listener drops the final ACK (everything but SYNs); connect() succeeds
    };

    // The server listens on `port`.
    LossyFlow(const NetNamespace& ns, Inet inet, Loss loss, std::uint16_t port)
        : inet_(inet), loss_(loss), port_(port)
    {
        if (pipe2(repair_, O_CLOEXEC) != 0 || pipe2(report_, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        child_ = std::make_unique<ScriptedChild>(
            "tpk-lossy", [this, &ns] { return prepare(ns); }, [this] { return act(); });
        close(repair_[0]);
        close(report_[1]);
    }
    ~LossyFlow()
    {
        close(repair_[1]);
        close(report_[0]);
    }

    std::uint16_t server_port() const { return port_; }
    void start() { child_->go(); }
    // Starts it, waits until the namespace's RetransSegs has grown by `wanted` (or a patient
    // 30 s), and repairs it.
    void lose(const NetNamespace& ns, std::uint64_t wanted)
    {
        using namespace std::chrono_literals;
        const std::uint64_t before = tcp_counter(ns, "RetransSegs");
        start();
        const auto deadline = std::chrono::steady_clock::now() + patient(30s);
        while (tcp_counter(ns, "RetransSegs") - before < wanted && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(5ms);
        repair();
    }
    // Takes the filter off: the next retransmit gets through.
    void repair()
    {
        char byte = 1;
        if (write(repair_[1], &byte, 1) != 1)
            ADD_FAILURE() << "the lossy flow's child is gone";
    }
    // Its exit code (0: every step went as expected) and the client's port.
    int wait(std::uint16_t& client_port)
    {
        int status = child_->wait();
        if (read(report_[0], &client_port, sizeof(client_port)) != sizeof(client_port))
            client_port = 0;
        return status;
    }

private:
    int prepare(const NetNamespace& ns)
    {
        sockaddr_storage address;
        socklen_t length = loopback_address(inet_, port_, address);
        int on = 1;
        if (!ns.enter())
            return 1;
        listener_ = listen_on_loopback(inet_, port_);
        client_ = socket(family_of(inet_), SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listener_ < 0 || client_ < 0)
            return 2;
        // Each write its own small segment: no coalescing, no GSO.
        if (setsockopt(client_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0)
            return 4;
        // A step that never completes fails the child instead of hanging the test.
        timeval patience{120, 0};
        if (setsockopt(listener_, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience)) != 0)
            return 5;
        if (loss_ == Loss::handshake)
            return attach_filter(listener_, keep_only_syns) ? 0 : 6;
        if (connect(client_, reinterpret_cast<sockaddr*>(&address), length) != 0)
            return 7;
        server_ = accept(listener_, nullptr, nullptr);
        if (server_ < 0 || setsockopt(server_, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience)) != 0)
            return 8;
        return 0;
    }

    int act()
    {
        sockaddr_storage address;
        socklen_t length = loopback_address(inet_, port_, address);
        char data[16] = "retransmit me", received[sizeof(data)], byte;
        if (loss_ == Loss::data) {
            if (!attach_filter(server_, drop_all))
                return 20;
        } else if (connect(client_, reinterpret_cast<sockaddr*>(&address), length) != 0) {
            return 21; // completes at the SYN-ACK; the final ACK is dropped
        }
        std::uint16_t port = local_port(client_);
        if (write(report_[1], &port, sizeof(port)) != sizeof(port))
            return 22;
        if (loss_ == Loss::data && write(client_, data, sizeof(data)) != sizeof(data))
            return 23;
        if (read(repair_[0], &byte, 1) != 1)
            return 24;
        if (loss_ == Loss::data) {
            if (!detach_filter(server_))
                return 25;
        } else {
            // The data acknowledges the SYN-ACK as well: the connection is accepted.
            if (!detach_filter(listener_) || write(client_, data, sizeof(data)) != sizeof(data))
                return 26;
            server_ = accept(listener_, nullptr, nullptr);
            if (server_ < 0)
                return 27;
        }
        std::size_t got = 0;
        while (got < sizeof(data)) {
            ssize_t n = read(server_, received + got, sizeof(data) - got);
            if (n <= 0)
                return 28;
            got += std::size_t(n);
        }
        close(client_);
        close(server_);
        close(listener_);
        return 0;
    }

    Inet inet_;
    Loss loss_;
    std::uint16_t port_;
    int repair_[2] = {-1, -1}, report_[2] = {-1, -1};
    int listener_ = -1, client_ = -1, server_ = -1;
    std::unique_ptr<ScriptedChild> child_;
};

} // namespace tpkit::live
