// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "private_netns.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace tpkit::live {

void PrivateNetns::send_datagrams(std::size_t payload, int count) const
{
    pid_t child = fork();
    if (child == 0) {
        if (!enter())
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
        static char buf[65536];
        for (int i = 0; i < count; i++) {
            if (sendto(tx, data.data(), data.size(), 0, reinterpret_cast<sockaddr*>(&addr),
                       sizeof(addr)) != static_cast<ssize_t>(payload))
                _exit(12);
            if (recv(rx, buf, sizeof(buf), 0) != static_cast<ssize_t>(payload))
                _exit(13);
        }
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "sender status " << status;
}

std::map<std::uint64_t, std::uint64_t> PrivateNetns::send_datagrams(
    const std::vector<Datagrams>& batches) const
{
    std::map<std::uint64_t, std::uint64_t> buckets;
    for (const auto& b : batches) {
        send_datagrams(b.payload, b.count);
        buckets[b.bucket] += b.count;
    }
    return buckets;
}

std::unique_ptr<ToolRun> PrivateNetns::start_histogram_tool(const std::string& tool,
                                                            const std::vector<std::string>& args,
                                                            std::size_t marker_payload,
                                                            std::uint64_t marker_low) const
{
    std::vector<std::string> argv{"/usr/bin/nsenter", "--net=" + path(), tool_path(tool),
                                  "--json", "0.1"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto run = std::make_unique<ToolRun>(argv);
    const std::string marker = "\"low\":" + std::to_string(marker_low) + ",";
    if (poke_until_line(
            *run, [&] { send_datagrams(marker_payload, 1); },
            [&](const std::string& l) { return l.find(marker) != std::string::npos; },
            poke_attempts, poke_wait))
        return run;
    ADD_FAILURE() << tool << " never counted a marker datagram: " << run->stderr_text();
    return nullptr;
}

} // namespace tpkit::live
