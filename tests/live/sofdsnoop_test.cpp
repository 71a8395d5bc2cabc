// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// sofdsnoop against descriptors passed by a known process: files of known paths sent over a
// datagram socketpair in known batches with sendmsg and sendmmsg, received with recvmsg and
// recvmmsg; every descriptor sent and received is one row with its exact number and path. A
// message with more descriptors than the event holds, and one received into too small a
// control buffer (MSG_CTRUNC), each say what was not shown.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <tpkit/tools/sofdsnoop.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;

namespace {

// sys_enter_ and sys_exit_ of sendmsg, recvmsg, sendmmsg and recvmmsg.
constexpr std::size_t sofdsnoop_links = 8;
constexpr int max_fds_batch = 24;

// Files of known paths, open in this process (a child inherits them at the same numbers).
class FilesToPass {
public:
    explicit FilesToPass(int count)
    {
        dir_ = std::filesystem::temp_directory_path() / ("tpkit-sofdsnoop-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        dir_ = std::filesystem::canonical(dir_);
        for (int i = 0; i < count; i++) {
            paths.push_back((dir_ / fmt::format("passed-{}", i)).string());
            std::ofstream(paths.back()) << i << "\n";
            fds.push_back(open(paths.back().c_str(), O_RDONLY | O_CLOEXEC));
        }
    }
    ~FilesToPass()
    {
        for (int fd : fds)
            close(fd);
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    std::vector<std::string> paths;
    std::vector<int> fds;

private:
    std::filesystem::path dir_;
};

// What the child received, in memory it shares with the test.
struct ReceivedFds {
    int count[8];
    int fds[8][max_fds_batch];
    int flags[8];
};

// A control buffer for `n` descriptors, aligned as cmsghdr needs.
union ControlBuffer {
    char buf[CMSG_SPACE(sizeof(int) * max_fds_batch)];
    struct cmsghdr align;
};

// A message of one byte, `byte`, with room for `room` descriptors in its control data.
void receive_into(struct msghdr& msg, ControlBuffer& control, struct iovec& iov, char& byte, int room)
{
    memset(&msg, 0, sizeof(msg));
    iov.iov_base = &byte;
    iov.iov_len = 1;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * room);
}

// The same, its control data one SCM_RIGHTS of the `n` descriptors of `fds`.
void put_rights(struct msghdr& msg, ControlBuffer& control, struct iovec& iov, char& byte, const int* fds, int n)
{
    receive_into(msg, control, iov, byte, n);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
}

void keep_received(const struct msghdr& msg, ReceivedFds& got, int slot)
{
    got.count[slot] = 0;
    got.flags[slot] = msg.msg_flags;
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(const_cast<struct msghdr*>(&msg), c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        memcpy(got.fds[slot] + got.count[slot], CMSG_DATA(c), sizeof(int) * n);
        got.count[slot] += n;
    }
}

// The rows of the tool's JSON output, without the last ("lost") line.
std::vector<nlohmann::json> sofd_rows(const ToolRun& tool)
{
    std::vector<nlohmann::json> rows;
    for (const auto& line : tool.lines()) {
        auto j = nlohmann::json::parse(line);
        if (j["type"] == "event")
            rows.push_back(j);
    }
    return rows;
}

struct PassedMessage {
    std::string action, call;
    int msg_index;
    std::vector<int> fds;
    std::vector<std::string> names;
};

void expect_passed_rows(const std::vector<nlohmann::json>& rows, std::size_t& at, const PassedMessage& want,
                 pid_t pid, int sock_fd)
{
    for (std::size_t i = 0; i < want.fds.size(); i++, at++) {
        SCOPED_TRACE(fmt::format("{} {} message {} descriptor {}", want.action, want.call, want.msg_index, i));
        ASSERT_LT(at, rows.size());
        const auto& r = rows[at];
        EXPECT_EQ(r["action"], want.action) << r;
        EXPECT_EQ(r["call"], want.call) << r;
        EXPECT_EQ(r["msg_index"], want.msg_index) << r;
        EXPECT_EQ(r["fd_index"], i) << r;
        EXPECT_EQ(r["fd"], want.fds[i]) << r;
        EXPECT_EQ(r["name"], want.names[i]) << r;
        EXPECT_EQ(r["name_cut"], 0) << r;
        EXPECT_EQ(r["fd_count"], want.fds.size()) << r;
        EXPECT_EQ(r["fds_read"], want.fds.size()) << r;
        EXPECT_EQ(r["fault"], 0) << r;
        EXPECT_EQ(r["pid"], pid) << r;
        EXPECT_EQ(r["tid"], pid) << r;
        EXPECT_EQ(r["comm"], "tpk-fdpasser") << r;
        EXPECT_EQ(r["sock_fd"], sock_fd) << r;
    }
}

} // namespace

// Batches of 1, 2 and 4 descriptors with sendmsg, each received with recvmsg; then two messages
// of 3 and 1 with one sendmmsg, both received with one recvmmsg.
TEST(SofdsnoopExact, EveryDescriptorSentAndReceivedWithItsNumberAndPath)
{
    TPKIT_REQUIRE_LIVE();
    FilesToPass files(11);
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair), 0);
    auto* got = static_cast<ReceivedFds*>(
        mmap(nullptr, sizeof(ReceivedFds), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(got, MAP_FAILED);
    memset(got, 0, sizeof(*got));
    const int* fds = files.fds.data();
    const int sender = pair[0], receiver = pair[1];
    ScriptedChild child("tpk-fdpasser", {}, [=] {
        struct msghdr msg;
        struct iovec iov;
        char byte = 'x';
        ControlBuffer control;
        const int batches[3][2] = {{0, 1}, {1, 2}, {3, 4}}; // first, count
        for (int b = 0; b < 3; b++) {
            put_rights(msg, control, iov, byte, fds + batches[b][0], batches[b][1]);
            if (sendmsg(sender, &msg, 0) != 1)
                return 10 + b;
            receive_into(msg, control, iov, byte, max_fds_batch);
            if (recvmsg(receiver, &msg, 0) != 1)
                return 20 + b;
            keep_received(msg, *got, b);
        }
        struct mmsghdr vec[2];
        struct iovec iovs[2];
        char bytes[2] = {'y', 'z'};
        ControlBuffer controls[2];
        put_rights(vec[0].msg_hdr, controls[0], iovs[0], bytes[0], fds + 7, 3);
        put_rights(vec[1].msg_hdr, controls[1], iovs[1], bytes[1], fds + 10, 1);
        if (sendmmsg(sender, vec, 2, 0) != 2)
            return 30;
        receive_into(vec[0].msg_hdr, controls[0], iovs[0], bytes[0], max_fds_batch);
        receive_into(vec[1].msg_hdr, controls[1], iovs[1], bytes[1], max_fds_batch);
        if (recvmmsg(receiver, vec, 2, MSG_WAITALL, nullptr) != 2)
            return 31;
        keep_received(vec[0].msg_hdr, *got, 3);
        keep_received(vec[1].msg_hdr, *got, 4);
        return 0;
    });
    ToolRun tool({tpkit::live::tool_path("sofdsnoop"), "--json", "-p", std::to_string(child.pid())});
    ASSERT_TRUE(tool.wait_until_attached(sofdsnoop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_TRUE(tool.wait_for_line(
        [](const std::string& l) { return l.find("\"recvmmsg\"") != std::string::npos && l.find("\"msg_index\":1") != std::string::npos; },
        20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");

    auto slice = [&](int first, int count) {
        return std::pair{std::vector<int>(files.fds.begin() + first, files.fds.begin() + first + count),
                         std::vector<std::string>(files.paths.begin() + first, files.paths.begin() + first + count)};
    };
    auto received = [&](int slot) {
        return std::vector<int>(got->fds[slot], got->fds[slot] + got->count[slot]);
    };
    std::vector<std::pair<PassedMessage, int>> expected; // and the socket
    const int firsts[5] = {0, 1, 3, 7, 10}, counts[5] = {1, 2, 4, 3, 1};
    for (int b = 0; b < 3; b++) {
        auto [sent, names] = slice(firsts[b], counts[b]);
        ASSERT_EQ(got->count[b], counts[b]);
        EXPECT_EQ(got->flags[b], 0);
        expected.push_back({{"SEND", "sendmsg", 0, sent, names}, sender});
        expected.push_back({{"RECV", "recvmsg", 0, received(b), names}, receiver});
    }
    for (int m = 0; m < 2; m++) {
        auto [sent, names] = slice(firsts[3 + m], counts[3 + m]);
        expected.push_back({{"SEND", "sendmmsg", m, sent, names}, sender});
    }
    for (int m = 0; m < 2; m++) {
        auto [sent, names] = slice(firsts[3 + m], counts[3 + m]);
        ASSERT_EQ(got->count[3 + m], counts[3 + m]);
        expected.push_back({{"RECV", "recvmmsg", m, received(3 + m), names}, receiver});
    }
    // Only that process was traced: the whole output is known, in order.
    const auto rows = sofd_rows(tool);
    std::size_t at = 0, total = 0;
    for (const auto& [want, sock] : expected) {
        total += want.fds.size();
        expect_passed_rows(rows, at, want, child.pid(), sock);
    }
    EXPECT_EQ(rows.size(), total) << fmt::format("{}", fmt::join(tool.lines(), "\n"));
    munmap(got, sizeof(*got));
    close(pair[0]);
    close(pair[1]);
}

// More descriptors in one message than the event holds: those it holds, then a row that says how
// many more; a receive whose control buffer holds fewer than were sent: those received, then a
// row saying MSG_CTRUNC.
TEST(SofdsnoopExact, CutMessagesSayWhatIsMissing)
{
    TPKIT_REQUIRE_LIVE();
    constexpr int many = SOFDSNOOP_MAX_FDS + 5, cut_to = 2, cut_sent = 3;
    FilesToPass files(many);
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair), 0);
    auto* got = static_cast<ReceivedFds*>(
        mmap(nullptr, sizeof(ReceivedFds), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(got, MAP_FAILED);
    const int* fds = files.fds.data();
    const int sender = pair[0], receiver = pair[1];
    ScriptedChild child("tpk-fdpasser", {}, [=] {
        struct msghdr msg;
        struct iovec iov;
        char byte = 'x';
        ControlBuffer control;
        put_rights(msg, control, iov, byte, fds, many);
        if (sendmsg(sender, &msg, 0) != 1)
            return 10;
        receive_into(msg, control, iov, byte, max_fds_batch);
        if (recvmsg(receiver, &msg, 0) != 1)
            return 11;
        keep_received(msg, *got, 0);
        put_rights(msg, control, iov, byte, fds, cut_sent);
        if (sendmsg(sender, &msg, 0) != 1)
            return 12;
        receive_into(msg, control, iov, byte, cut_to);
        if (recvmsg(receiver, &msg, 0) != 1)
            return 13;
        keep_received(msg, *got, 1);
        return 0;
    });
    ToolRun tool({tpkit::live::tool_path("sofdsnoop"), "--json", "-p", std::to_string(child.pid())});
    ASSERT_TRUE(tool.wait_until_attached(sofdsnoop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_TRUE(tool.wait_for_line(
        [](const std::string& l) { return l.find("MSG_CTRUNC") != std::string::npos; }, 20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    ASSERT_EQ(got->count[0], many);
    ASSERT_EQ(got->count[1], cut_to);
    EXPECT_EQ(got->flags[1] & MSG_CTRUNC, MSG_CTRUNC);

    const auto rows = sofd_rows(tool);
    const std::size_t shown = SOFDSNOOP_MAX_FDS;
    // SEND many (16 + a note), RECV many (16 + a note), SEND 3, RECV 2 + a note.
    ASSERT_EQ(rows.size(), 2 * (shown + 1) + cut_sent + cut_to + 1) << fmt::format("{}", fmt::join(tool.lines(), "\n"));
    std::size_t at = 0;
    for (const std::string action : {"SEND", "RECV"}) {
        for (std::size_t i = 0; i < shown; i++, at++) {
            EXPECT_EQ(rows[at]["action"], action) << rows[at];
            EXPECT_EQ(rows[at]["fd"], action == "SEND" ? files.fds[i] : got->fds[0][i]) << rows[at];
            EXPECT_EQ(rows[at]["name"], files.paths[i]) << rows[at];
            EXPECT_EQ(rows[at]["fd_count"], many) << rows[at];
            EXPECT_EQ(rows[at]["fds_read"], shown) << rows[at];
        }
        EXPECT_EQ(rows[at]["action"], action) << rows[at];
        EXPECT_TRUE(rows[at]["fd"].is_null()) << rows[at];
        EXPECT_EQ(rows[at]["name"], fmt::format("({} more descriptors not read)", many - shown)) << rows[at];
        at++;
    }
    for (int i = 0; i < cut_sent; i++, at++) {
        EXPECT_EQ(rows[at]["action"], "SEND") << rows[at];
        EXPECT_EQ(rows[at]["fd"], files.fds[i]) << rows[at];
    }
    for (int i = 0; i < cut_to; i++, at++) {
        EXPECT_EQ(rows[at]["action"], "RECV") << rows[at];
        EXPECT_EQ(rows[at]["fd"], got->fds[1][i]) << rows[at];
        EXPECT_EQ(rows[at]["name"], files.paths[i]) << rows[at];
        EXPECT_EQ(rows[at]["msg_flags"].get<int>() & MSG_CTRUNC, MSG_CTRUNC) << rows[at];
    }
    EXPECT_EQ(rows[at]["action"], "RECV") << rows[at];
    EXPECT_TRUE(rows[at]["fd"].is_null()) << rows[at];
    EXPECT_EQ(rows[at]["name"], "(MSG_CTRUNC: the kernel discarded descriptors that did not fit)") << rows[at];
    munmap(got, sizeof(*got));
    close(pair[0]);
    close(pair[1]);
}

// The text columns, as bcc's: one row per descriptor.
TEST(SofdsnoopExact, TextRowsHaveTheColumns)
{
    TPKIT_REQUIRE_LIVE();
    FilesToPass files(1);
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair), 0);
    const int fd = files.fds[0], sender = pair[0], receiver = pair[1];
    int* received = static_cast<int*>(
        mmap(nullptr, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(received, MAP_FAILED);
    ScriptedChild child("tpk-fdpasser", {}, [=] {
        struct msghdr msg;
        struct iovec iov;
        char byte = 'x';
        ControlBuffer control;
        put_rights(msg, control, iov, byte, &fd, 1);
        if (sendmsg(sender, &msg, 0) != 1)
            return 10;
        receive_into(msg, control, iov, byte, 1);
        if (recvmsg(receiver, &msg, 0) != 1)
            return 11;
        memcpy(received, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
        return 0;
    });
    ToolRun tool({tpkit::live::tool_path("sofdsnoop"), "-p", std::to_string(child.pid())});
    ASSERT_TRUE(tool.wait_until_attached(sofdsnoop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_TRUE(tool.wait_for_line([](const std::string& l) { return l.find("RECV") != std::string::npos; }, 20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const auto& lines = tool.lines();
    ASSERT_EQ(lines.size(), 3u) << fmt::format("{}", fmt::join(lines, "\n"));
    EXPECT_EQ(lines[0], "TIME     ACTION TID     COMM             SOCKET                    FD    NAME");
    struct stat st[2];
    ASSERT_EQ(fstat(sender, &st[0]), 0);
    ASSERT_EQ(fstat(receiver, &st[1]), 0);
    constexpr std::size_t time_width = 8; // "HH:MM:SS"
    const char* actions[2] = {"SEND", "RECV"};
    const int socks[2] = {sender, receiver}, fds[2] = {fd, *received};
    for (int i = 0; i < 2; i++) {
        ASSERT_GT(lines[1 + i].size(), time_width);
        EXPECT_EQ(lines[1 + i].substr(time_width),
                  fmt::format(" {:<6} {:<7} {:<16} {:<25} {:<5} {}", actions[i], child.pid(), "tpk-fdpasser",
                              fmt::format("{}:socket:[{}]", socks[i], st[i].st_ino), fds[i], files.paths[0]));
    }
    munmap(received, sizeof(int));
    close(pair[0]);
    close(pair[1]);
}

// ControlBuffer data BPF cannot read when the send returns: the sender blocks in sendmsg (its stream
// socket full) after the kernel copied its SCM_RIGHTS, and meanwhile the file its control buffer
// is mapped from is truncated, which unmaps the page. The row says so, with no descriptor.
TEST(SofdsnoopExact, UnreadableControlDataIsSaid)
{
    TPKIT_REQUIRE_LIVE();
    FilesToPass files(1);
    const std::string backing = files.paths[0] + ".control";
    int control_fd = open(backing.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(control_fd, 0);
    const long page = sysconf(_SC_PAGESIZE);
    ASSERT_EQ(ftruncate(control_fd, page), 0);
    auto* control = static_cast<ControlBuffer*>(mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, control_fd, 0));
    ASSERT_NE(control, MAP_FAILED);
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    const int small = 4096;
    ASSERT_EQ(setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
    const int fd = files.fds[0], sender = pair[0];
    ScriptedChild child("tpk-fdpasser", {}, [=] {
        static char fill[4096];
        while (send(sender, fill, sizeof(fill), MSG_DONTWAIT) > 0) {
        }
        struct msghdr msg;
        struct iovec iov;
        char byte = 'x';
        put_rights(msg, *control, iov, byte, &fd, 1);
        return sendmsg(sender, &msg, 0) == 1 ? 0 : 10;
    });
    ToolRun tool({tpkit::live::tool_path("sofdsnoop"), "--json", "-p", std::to_string(child.pid())});
    ASSERT_TRUE(tool.wait_until_attached(sofdsnoop_links, 20s)) << tool.stderr_text();
    child.go();
    // Blocked in sendmsg (x86-64's 46), after its control data was copied.
    const std::string syscall_file = fmt::format("/proc/{}/syscall", child.pid());
    bool blocked = false;
    for (auto until = std::chrono::steady_clock::now() + tpkit::live::patient(20s);
         !blocked && std::chrono::steady_clock::now() < until;) {
        std::ifstream in(syscall_file);
        std::string number;
        in >> number;
        blocked = number == "46";
        if (!blocked)
            usleep(10000);
    }
    ASSERT_TRUE(blocked) << "the sender never blocked in sendmsg";
    ASSERT_EQ(ftruncate(control_fd, 0), 0); // unmaps the control buffer's page
    static char sink[65536];
    while (recv(pair[1], sink, sizeof(sink), MSG_DONTWAIT) > 0) {
    }
    ASSERT_EQ(child.wait(), 0);
    ASSERT_TRUE(tool.wait_for_line([](const std::string& l) { return l.find("unreadable") != std::string::npos; }, 20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const auto rows = sofd_rows(tool);
    ASSERT_EQ(rows.size(), 1u) << fmt::format("{}", fmt::join(tool.lines(), "\n"));
    EXPECT_EQ(rows[0]["action"], "SEND");
    EXPECT_TRUE(rows[0]["fd"].is_null()) << rows[0];
    EXPECT_EQ(rows[0]["name"], "(control data unreadable)") << rows[0];
    EXPECT_EQ(rows[0]["fault"], SOFDSNOOP_FAULT_CONTROL) << rows[0];
    EXPECT_EQ(rows[0]["ret"], 1) << rows[0];
    munmap(control, page);
    close(control_fd);
    close(pair[0]);
    close(pair[1]);
}
