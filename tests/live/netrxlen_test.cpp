// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// netrxlen against real packets: UDP datagrams of chosen sizes on the loopback device of a
// private network namespace land in exactly the expected log2 buckets.
#include "live.hpp"
#include "tool_run.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <map>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr int udp_ip_overhead = 28; // IPv4 header + UDP header: the IP packet length
constexpr std::size_t marker_payload = 1200; // lands in [1024, 2047], kept apart from the test

// A private network namespace with its loopback up, held by a child process: it goes away with
// that process on every exit path, and needs no mounts (unlike `ip netns add`).
class NetNs {
public:
    NetNs()
    {
        int ready[2];
        if (pipe(ready) != 0)
            throw std::runtime_error("pipe failed");
        holder_ = fork();
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
        if (!up)
            throw std::runtime_error("cannot make a network namespace");
    }
    ~NetNs()
    {
        kill(holder_, SIGKILL);
        waitpid(holder_, nullptr, 0);
    }
    std::string path() const { return "/proc/" + std::to_string(holder_) + "/ns/net"; }

    // Sends `count` UDP datagrams of `payload` bytes to a bound socket on 127.0.0.1 from inside
    // the namespace (a bound receiver: no ICMP port-unreachable packets join the count).
    void send_datagrams(std::size_t payload, int count) const
    {
        pid_t child = fork();
        if (child == 0) {
            int ns = open(path().c_str(), O_RDONLY);
            if (ns < 0 || setns(ns, CLONE_NEWNET) != 0)
                _exit(10);
            int rx = socket(AF_INET, SOCK_DGRAM, 0), tx = socket(AF_INET, SOCK_DGRAM, 0);
            sockaddr_in addr{};
            addr.sin_family = AF_INET;
            addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            int size = 1 << 20;
            setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
            socklen_t len = sizeof(addr);
            if (bind(rx, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
                getsockname(rx, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
                _exit(11);
            std::string data(payload, 'x');
            char buf[65536];
            for (int i = 0; i < count; i++) {
                if (sendto(tx, data.data(), data.size(), 0, reinterpret_cast<sockaddr*>(&addr),
                           sizeof(addr)) != static_cast<ssize_t>(payload))
                    _exit(12);
                // Receiving each one keeps the socket buffer from ever dropping.
                if (recv(rx, buf, sizeof(buf), 0) != static_cast<ssize_t>(payload))
                    _exit(13);
            }
            _exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "sender status " << status;
    }

private:
    static bool loopback_up()
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
    pid_t holder_ = -1;
};


void expect_exact_histogram(const std::vector<std::string>& extra_args, const std::string& key)
{
    TPKIT_REQUIRE_LIVE();
    NetNs ns;
    std::vector<std::string> argv{"/usr/bin/nsenter", "--net=" + ns.path(),
                                  tpkit::live::tool_path("netrxlen"), "--json", "0.1"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    ToolRun tool(argv);

    // Handshake: marker datagrams until a histogram shows one.
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [&] { ns.send_datagrams(marker_payload, 1); },
        [](const std::string& l) { return l.find("\"low\":1024") != std::string::npos; }, 50,
        300ms))
        << tool.stderr_text();

    // IP lengths 38, 60, 128, 200, 328: buckets [32,63] x(7+5), [128,255] x(11+3), [256,511] x13
    ns.send_datagrams(10, 7);
    ns.send_datagrams(32, 5);
    ns.send_datagrams(100, 11);
    ns.send_datagrams(172, 3);
    ns.send_datagrams(300, 13);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    auto counts = tpkit::live::histogram_buckets(tool.lines(), key);
    counts.erase(1024); // the markers
    std::map<std::uint64_t, std::uint64_t> expected{{32, 12}, {128, 14}, {256, 13}};
    EXPECT_EQ(counts, expected);
}

} // namespace

TEST(NetrxlenExact, ExactBucketsAtNetifReceiveSkb) { expect_exact_histogram({"--dev", "lo"}, ""); }

TEST(NetrxlenExact, ExactBucketsAtNetifRx)
{
    expect_exact_histogram({"--dev", "lo", "--event", "netif_rx"}, "");
}

TEST(NetrxlenExact, PerDeviceHistogramIsKeyedByName)
{
    expect_exact_histogram({"--dev", "lo", "--per-dev"}, "lo");
}
