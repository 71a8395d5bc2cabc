// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcptop against a real TCP connection on the loopback of a private network namespace: one child
// connects to itself and moves known byte counts each way, with a receive that fails (EAGAIN), a
// peek, and a send that fails (EPIPE) among them; its two rows (the client's end and the
// server's) carry exactly the bytes each end sent and received, the failures and the peek
// counting nothing. On kernels without sock:sock_send_length (before 6.3: Debian's 6.1) it must
// say so and exit 4.
#include "live.hpp"
#include "net_namespace.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <tpkit/kernel/tracefs.hpp>

#include <fmt/format.h>

#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::Inet;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;

namespace {

constexpr std::size_t tcptop_links = 2; // sock_send_length, sock_recv_length
constexpr std::uint16_t tcptop_port = 5300;
// Whole kilobytes, for the text's KB columns; the reply fits the receiver's socket buffer, so
// that one send takes it all before anything reads it.
constexpr std::size_t request_bytes = 3 * 1024, reply_bytes = 20 * 1024;
constexpr const char* child_comm = "tpk-tcptop";

bool kernel_has_sock_length() { return tpkit::event_exists({"sock", "sock_send_length"}); }

bool send_all(int fd, const char* data, std::size_t size)
{
    while (size > 0) {
        ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

bool receive_exactly(int fd, char* buffer, std::size_t size)
{
    while (size > 0) {
        ssize_t n = recv(fd, buffer, size, 0);
        if (n <= 0)
            return false;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// The buffer the child sends from and receives into (no allocation after fork).
char child_buffer[reply_bytes];

// A child in `ns` that listens on the loopback (prepare), then (act) connects to itself,
// accepts, receives nothing (EAGAIN), sends the request, peeks at it and reads it on the
// server's end, replies, reads the reply, and sends once more after shutting its writes down
// (EPIPE). 0 when every step went as expected.
ScriptedChild connection_child(const tpkit::live::NetNamespace& ns, Inet inet)
{
    static int listener = -1;
    return ScriptedChild(
        child_comm,
        [&ns, inet] {
            if (!ns.enter())
                return 1;
            listener = tpkit::live::listen_on_loopback(inet, tcptop_port);
            return listener >= 0 ? 0 : 2;
        },
        [inet] {
            sockaddr_storage address;
            socklen_t length = tpkit::live::loopback_address(inet, tcptop_port, address);
            int client = socket(tpkit::live::family_of(inet), SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (client < 0 || connect(client, reinterpret_cast<sockaddr*>(&address), length) != 0)
                return 3;
            int server = accept(listener, nullptr, nullptr);
            if (server < 0)
                return 4;
            if (recv(client, child_buffer, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN)
                return 5;
            if (!send_all(client, child_buffer, request_bytes))
                return 6;
            if (recv(server, child_buffer, request_bytes, MSG_PEEK | MSG_WAITALL) != ssize_t(request_bytes))
                return 7;
            if (!receive_exactly(server, child_buffer, request_bytes))
                return 8;
            if (!send_all(server, child_buffer, reply_bytes) ||
                !receive_exactly(client, child_buffer, reply_bytes))
                return 9;
            if (shutdown(client, SHUT_WR) != 0 ||
                send(client, child_buffer, 1, MSG_NOSIGNAL) != -1 || errno != EPIPE)
                return 10;
            close(client);
            close(server);
            close(listener);
            return 0;
        });
}

// tcptop ARGS (one interval, printed at SIGINT) while the child moves its bytes.
std::unique_ptr<ToolRun> run_while_child_connects(Inet inet, std::vector<std::string> args, pid_t& child_pid)
{
    tpkit::live::NetNamespace ns;
    auto child = connection_child(ns, inet);
    child_pid = child.pid();
    std::vector<std::string> argv{tpkit::live::tool_path("tcptop"), "-p", std::to_string(child.pid())};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("3600");
    auto tool = std::make_unique<ToolRun>(argv);
    EXPECT_TRUE(tool->wait_until_attached(tcptop_links, 20s)) << tool->stderr_text();
    EXPECT_EQ(child.go_and_wait(), 0);
    EXPECT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    return tool;
}

using JsonRow = std::map<std::string, std::string>;

// The rows the two ends of the child's connection must have, client's end first.
std::vector<JsonRow> expected_rows(Inet inet, pid_t child, const std::string& client_port)
{
    const std::string address = tpkit::live::loopback_text(inet);
    const std::string ip = std::to_string(tpkit::live::ip_version(inet));
    const std::string port = std::to_string(tcptop_port);
    auto row = [&](const std::string& lport, const std::string& rport, std::size_t rx, std::size_t tx) {
        return JsonRow{{"type", "count"}, {"pid", std::to_string(child)}, {"comm", child_comm},
                       {"ip", ip}, {"laddr", address}, {"lport", lport}, {"raddr", address},
                       {"rport", rport}, {"rx_bytes", std::to_string(rx)},
                       {"tx_bytes", std::to_string(tx)}};
    };
    return {row(client_port, port, reply_bytes, request_bytes),
            row(port, client_port, request_bytes, reply_bytes)};
}

} // namespace

TEST(TcptopExact, SaysWhereTheKernelLacksTheTracepoints)
{
    TPKIT_REQUIRE_LIVE();
    if (kernel_has_sock_length())
        GTEST_SKIP() << "this kernel has sock:sock_send_length";
    ToolRun tool({tpkit::live::tool_path("tcptop")});
    EXPECT_EQ(tool.wait(tpkit::live::patient(20s)), 4);
    EXPECT_EQ(tool.stderr_text(), "tcptop: this kernel has no sock:sock_send_length tracepoint "
                                  "(Linux 6.3 and later have it)\n");
}

TEST(TcptopExact, BytesEachWayPerConnectionEnd)
{
    TPKIT_REQUIRE_LIVE();
    if (!kernel_has_sock_length())
        GTEST_SKIP() << "no sock:sock_send_length before Linux 6.3";
    for (Inet inet : {Inet::v4, Inet::v6, Inet::v4_mapped}) {
        SCOPED_TRACE(tpkit::live::loopback_text(inet));
        pid_t child = 0;
        auto tool = run_while_child_connects(inet, {"--json"}, child);
        EXPECT_EQ(tool->stderr_text(), "");
        std::vector<JsonRow> rows;
        for (const auto& line : tool->lines())
            if (auto row = tpkit::live::parse_flat_json(line); row.count("pid")) {
                row.erase("time_ns");
                rows.push_back(row);
            }
        const std::string all = fmt::format("{}", fmt::join(tool->lines(), "\n"));
        ASSERT_EQ(rows.size(), 2u) << all;
        // Sorted by bytes both ways, equal here: the client's end is the one not on the port.
        if (rows[0]["lport"] == std::to_string(tcptop_port))
            std::swap(rows[0], rows[1]);
        EXPECT_EQ(rows, expected_rows(inet, child, rows[0]["lport"])) << all;
    }
}

TEST(TcptopExact, SortAndRowsKeepTheTopEnd)
{
    TPKIT_REQUIRE_LIVE();
    if (!kernel_has_sock_length())
        GTEST_SKIP() << "no sock:sock_send_length before Linux 6.3";
    for (const auto& [sort, client_first] : {std::pair{"received", true}, std::pair{"sent", false}}) {
        SCOPED_TRACE(sort);
        pid_t child = 0;
        auto tool = run_while_child_connects(Inet::v4, {"--json", "-s", sort, "-r", "1"}, child);
        std::vector<JsonRow> rows;
        for (const auto& line : tool->lines())
            if (auto row = tpkit::live::parse_flat_json(line); row.count("pid"))
                rows.push_back(row);
        ASSERT_EQ(rows.size(), 1u) << fmt::format("{}", fmt::join(tool->lines(), "\n"));
        // The client received the reply, the larger; the server sent it.
        EXPECT_EQ(rows[0]["lport"] != std::to_string(tcptop_port), client_first);
        EXPECT_EQ(rows[0][client_first ? "rx_bytes" : "tx_bytes"], std::to_string(reply_bytes));
    }
}

TEST(TcptopExact, TextIsLibbpfToolsTables)
{
    TPKIT_REQUIRE_LIVE();
    if (!kernel_has_sock_length())
        GTEST_SKIP() << "no sock:sock_send_length before Linux 6.3";
    pid_t child = 0;
    auto tool = run_while_child_connects(Inet::v6, {"-C"}, child);
    auto lines = tool->lines();
    const std::string all = fmt::format("{}", fmt::join(lines, "\n"));
    ASSERT_EQ(lines.size(), 7u) << all;
    EXPECT_TRUE(std::regex_match(lines[0], std::regex(R"([0-2][0-9]:[0-5][0-9]:[0-6][0-9] loadavg: .*)")))
        << all;
    EXPECT_TRUE(std::regex_match(lines[1], std::regex(R"(PID +COMM +LADDR +RADDR +RX_KB +TX_KB)")))
        << all;
    EXPECT_EQ(lines[2], "") << all;
    EXPECT_TRUE(std::regex_match(lines[3], std::regex(R"(PID +COMM +LADDR6 +RADDR6 +RX_KB +TX_KB)")))
        << all;
    // Both ends, the same bytes both ways in all: in either order.
    const std::string pid = std::to_string(child);
    const std::regex client(fmt::format(R"({} +{} +\[::1\]:[0-9]+ +\[::1\]:{} +{} +{})", pid, child_comm,
                                        tcptop_port, reply_bytes / 1024, request_bytes / 1024));
    const std::regex server(fmt::format(R"({} +{} +\[::1\]:{} +\[::1\]:[0-9]+ +{} +{})", pid, child_comm,
                                        tcptop_port, request_bytes / 1024, reply_bytes / 1024));
    EXPECT_TRUE(std::regex_match(lines[4], client) || std::regex_match(lines[5], client)) << all;
    EXPECT_TRUE(std::regex_match(lines[4], server) || std::regex_match(lines[5], server)) << all;
    EXPECT_EQ(lines[6], "") << all;
}
