// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// slabratetop against real slab allocations: a child opens known numbers of TCP sockets over
// IPv4 and IPv6. Each socket(2) of SOCK_STREAM takes exactly one object from the cache "TCP"
// (or "TCPv6"; sk_prot_alloc(), checked against the kernel's own kmem_cache_alloc records), caches
// SLAB_TYPESAFE_BY_RCU keeps from being merged with another; their rows carry exactly those
// counts, and bytes of the cache's object size (/proc/slabinfo) each.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <fmt/format.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;

namespace {

constexpr std::size_t slabratetop_links = 1; // kmem_cache_alloc
constexpr int tcp_sockets = 7, tcp6_sockets = 3;

// A child that opens `v4` IPv4 and `v6` IPv6 TCP sockets (act), all left open until it exits.
ScriptedChild socket_opener(int v4, int v6)
{
    return ScriptedChild("tpk-slabs", nullptr, [v4, v6] {
        for (int i = 0; i < v4 + v6; i++)
            if (syscall(SYS_socket, i < v4 ? AF_INET : AF_INET6, SOCK_STREAM, 0) < 0)
                return 1 + i;
        return 0;
    });
}

// A cache's object size in bytes as /proc/slabinfo says (SLUB's s->size), 0 when not listed.
std::uint64_t slab_object_size(const std::string& cache)
{
    std::ifstream slabinfo("/proc/slabinfo");
    for (std::string line; std::getline(slabinfo, line);) {
        std::istringstream fields(line);
        std::string name;
        std::uint64_t active = 0, total = 0, objsize = 0;
        if (fields >> name >> active >> total >> objsize && name == cache)
            return objsize;
    }
    return 0;
}

std::map<std::string, std::map<std::string, std::string>> rows_by_cache(const ToolRun& tool)
{
    std::map<std::string, std::map<std::string, std::string>> rows;
    for (const auto& line : tool.lines())
        if (auto row = tpkit::live::parse_flat_json(line); row.count("cache"))
            rows[row["cache"]] = row;
    return rows;
}

} // namespace

TEST(SlabratetopExact, CountsEachSocketsCacheObjectOnce)
{
    TPKIT_REQUIRE_LIVE();
    auto child = socket_opener(tcp_sockets, tcp6_sockets);
    // One interval, printed at SIGINT; every cache the child allocates from (-r).
    ToolRun tool({tpkit::live::tool_path("slabratetop"), "--json", "-r", "10240", "-p",
                  std::to_string(child.pid()), "3600"});
    ASSERT_TRUE(tool.wait_until_attached(slabratetop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.stderr_text(), "");

    auto rows = rows_by_cache(tool);
    const std::string all = fmt::format("{}", fmt::join(tool.lines(), "\n"));
    for (const auto& [cache, sockets] : {std::pair{std::string("TCP"), tcp_sockets},
                                         std::pair{std::string("TCPv6"), tcp6_sockets}}) {
        const std::uint64_t size = slab_object_size(cache);
        ASSERT_GT(size, 0u) << cache << " is not in /proc/slabinfo";
        ASSERT_TRUE(rows.count(cache)) << all;
        EXPECT_EQ(rows[cache]["type"], "count");
        EXPECT_EQ(rows[cache]["allocs"], std::to_string(sockets)) << all;
        EXPECT_EQ(rows[cache]["bytes"], std::to_string(sockets * size)) << all;
    }
}

TEST(SlabratetopExact, RowsSortedAndLimited)
{
    TPKIT_REQUIRE_LIVE();
    auto child = socket_opener(tcp_sockets, 0);
    constexpr std::size_t rows_limit = 3;
    ToolRun tool({tpkit::live::tool_path("slabratetop"), "--json", "-s", "count", "-r",
                  std::to_string(rows_limit), "-p", std::to_string(child.pid()), "3600"});
    ASSERT_TRUE(tool.wait_until_attached(slabratetop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    std::vector<std::uint64_t> allocs;
    for (const auto& line : tool.lines())
        if (auto row = tpkit::live::parse_flat_json(line); row.count("cache"))
            allocs.push_back(std::stoull(row["allocs"]));
    // The child's 7 sockets alone take 7 objects each of TCP, its inode and file caches.
    ASSERT_EQ(allocs.size(), rows_limit) << fmt::format("{}", fmt::join(tool.lines(), "\n"));
    for (std::size_t i = 1; i < allocs.size(); i++)
        EXPECT_GE(allocs[i - 1], allocs[i]);
    EXPECT_GE(allocs.back(), std::uint64_t(tcp_sockets));
}

TEST(SlabratetopExact, TextIsBccsTable)
{
    TPKIT_REQUIRE_LIVE();
    auto child = socket_opener(tcp_sockets, 0);
    ToolRun tool({tpkit::live::tool_path("slabratetop"), "-C", "-r", "10240", "-p",
                  std::to_string(child.pid()), "3600"});
    ASSERT_TRUE(tool.wait_until_attached(slabratetop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const auto lines = tool.lines();
    const std::string all = fmt::format("{}", fmt::join(lines, "\n"));
    ASSERT_GE(lines.size(), 3u) << all;
    EXPECT_TRUE(std::regex_match(lines[0], std::regex(R"([0-2][0-9]:[0-5][0-9]:[0-6][0-9] loadavg: .*)")))
        << all;
    EXPECT_TRUE(std::regex_match(lines[1], std::regex(R"(CACHE +ALLOCS +BYTES)"))) << all;
    const std::string tcp_row = fmt::format("TCP +{} +{}", tcp_sockets, tcp_sockets * slab_object_size("TCP"));
    EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                            [&](const std::string& l) { return std::regex_match(l, std::regex(tcp_row)); }),
              1)
        << all;
}
