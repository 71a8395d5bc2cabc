// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// syncsnoop against real calls: one of each sync-family call from a known process, each seen
// exactly once, in order, with its arguments.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>

using namespace std::chrono_literals;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;

namespace {

// A one-page file, open and mapped shared, for the calls to work on; removed afterwards.
class ScratchFile {
public:
    ScratchFile()
    {
        path_ = std::filesystem::temp_directory_path() /
                ("tpkit-syncsnoop-" + std::to_string(getpid()));
        fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd_ < 0 || ftruncate(fd_, page) != 0)
            throw std::runtime_error("cannot make " + path_.string());
        map_ = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        if (map_ == MAP_FAILED)
            throw std::runtime_error("cannot map " + path_.string());
    }
    ~ScratchFile()
    {
        munmap(map_, page);
        close(fd_);
        unlink(path_.c_str());
    }

    static constexpr long page = 4096;
    int fd() const { return fd_; }
    void* map() const { return map_; }

private:
    std::filesystem::path path_;
    int fd_ = -1;
    void* map_ = nullptr;
};

// sys_enter_ of sync, syncfs, fsync, fdatasync, msync and sync_file_range.
constexpr std::size_t syncsnoop_links = 6;

} // namespace

TEST(SyncsnoopExact, EachCallOnceInOrderWithItsArguments)
{
    TPKIT_REQUIRE_LIVE();
    ScratchFile file;
    const int fd = file.fd();
    void* map = file.map();
    ScriptedChild syncer("tpk-syncer", {}, [fd, map] {
        if (syscall(SYS_sync) != 0)
            return 1;
        if (syscall(SYS_syncfs, fd) != 0)
            return 2;
        if (syscall(SYS_fsync, fd) != 0)
            return 3;
        if (syscall(SYS_fdatasync, fd) != 0)
            return 4;
        if (syscall(SYS_msync, map, ScratchFile::page, MS_SYNC) != 0)
            return 5;
        if (syscall(SYS_sync_file_range, fd, 0, ScratchFile::page, SYNC_FILE_RANGE_WRITE) != 0)
            return 6;
        return 0;
    });
    const std::string pid = std::to_string(syncer.pid());
    ToolRun tool({tpkit::live::tool_path("syncsnoop"), "--json", "-p", pid});
    ASSERT_TRUE(tool.wait_until_attached(syncsnoop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(syncer.go_and_wait(), 0);
    // The last call's line, then the rest of the output.
    ASSERT_TRUE(tool.wait_for_line(
        [](const std::string& l) { return l.find("\"sync_file_range\"") != std::string::npos; }, 20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    // Only that process was traced: the whole output is known.
    const std::string f = std::to_string(fd);
    const std::string page = std::to_string(ScratchFile::page);
    char addr[32];
    snprintf(addr, sizeof(addr), "%#lx", reinterpret_cast<unsigned long>(map));
    const std::vector<std::array<std::string, 3>> expected{
        {"sync", "-1", ""},
        {"syncfs", f, "fd=" + f},
        {"fsync", f, "fd=" + f},
        {"fdatasync", f, "fd=" + f},
        {"msync", "-1", std::string("addr=") + addr + " len=" + page + " flags=MS_SYNC"},
        {"sync_file_range", f, "fd=" + f + " offset=0 nbytes=" + page + " flags=SYNC_FILE_RANGE_WRITE"},
    };
    const auto& lines = tool.lines();
    ASSERT_EQ(lines.size(), expected.size() + 1) << tool.stderr_text(); // and the "lost" line
    for (std::size_t i = 0; i < expected.size(); i++) {
        auto e = tpkit::live::parse_flat_json(lines[i]);
        EXPECT_EQ(e["call"], expected[i][0]) << lines[i];
        EXPECT_EQ(e["fd"], expected[i][1]) << lines[i];
        EXPECT_EQ(e["call_args"], expected[i][2]) << lines[i];
        EXPECT_EQ(e["pid"], pid) << lines[i];
        EXPECT_EQ(e["tid"], pid) << lines[i];
        EXPECT_EQ(e["comm"], "tpk-syncer") << lines[i];
    }
    EXPECT_EQ(lines.back(), "{\"type\":\"lost\",\"lost_events\":0}");
}

TEST(SyncsnoopExact, TextRowsShowCallAndArguments)
{
    TPKIT_REQUIRE_LIVE();
    ScratchFile file;
    const int fd = file.fd();
    ScriptedChild syncer("tpk-syncer", {}, [fd] { return syscall(SYS_fdatasync, fd) == 0 ? 0 : 1; });
    ToolRun tool({tpkit::live::tool_path("syncsnoop"), "-p", std::to_string(syncer.pid())});
    ASSERT_TRUE(tool.wait_until_attached(syncsnoop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(syncer.go_and_wait(), 0);
    ASSERT_TRUE(tool.wait_for_line(
        [](const std::string& l) { return l.find("fdatasync") != std::string::npos; }, 20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    ASSERT_EQ(tool.lines().size(), 2u); // the header, the call
    EXPECT_EQ(tool.lines()[0], "TIME     COMM                 PID CALL             ARGS");
    // HH:MM:SS, then the columns at their widths.
    const std::string row = tool.lines()[1];
    const std::size_t time_width = std::string("HH:MM:SS").size();
    ASSERT_GT(row.size(), time_width + 1) << row;
    EXPECT_EQ(row.substr(time_width), fmt::format(" {:<16} {:>7} {:<16} fd={}", "tpk-syncer",
                                         syncer.pid(), "fdatasync", fd));
}
