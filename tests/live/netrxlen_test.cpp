// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// netrxlen against real packets: UDP datagrams of chosen sizes on the loopback device of a
// private network namespace land in exactly the expected log2 buckets.
#include "live.hpp"
#include "net_namespace.hpp"
#include "tool_run.hpp"

#include <arpa/inet.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr int udp_ip_overhead = 28; // IPv4 header + UDP header: the IP packet length
constexpr std::size_t marker_payload = 1200; // lands in [1024, 2047], kept apart from the test

// Sends `count` UDP datagrams of `payload` bytes to a bound socket on 127.0.0.1 from inside the
// namespace (a bound receiver: no ICMP port-unreachable packets join the count).
void send_datagrams(const tpkit::live::NetNamespace& ns, std::size_t payload, int count)
{
    pid_t child = fork();
    if (child == 0) {
        if (!ns.enter())
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

void expect_exact_histogram(const std::vector<std::string>& extra_args, const std::string& key)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::NetNamespace ns;
    std::vector<std::string> argv{"/usr/bin/nsenter", "--net=" + ns.path(),
                                  tpkit::live::tool_path("netrxlen"), "--json", "0.1"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    ToolRun tool(argv);

    // Handshake: marker datagrams until a histogram shows one.
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [&] { send_datagrams(ns, marker_payload, 1); },
        [](const std::string& l) { return l.find("\"low\":1024") != std::string::npos; }, 50,
        300ms))
        << tool.stderr_text();

    // IP lengths 38, 60, 128, 200, 328: buckets [32,63] x(7+5), [128,255] x(11+3), [256,511] x13
    send_datagrams(ns, 10, 7);
    send_datagrams(ns, 32, 5);
    send_datagrams(ns, 100, 11);
    send_datagrams(ns, 172, 3);
    send_datagrams(ns, 300, 13);
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
