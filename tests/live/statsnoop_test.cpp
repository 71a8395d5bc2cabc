// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// statsnoop against real calls from a known process: one of each stat-family call, each seen
// once, in order, with its result and path; failures alone with -x.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;

namespace {

class StatPaths {
public:
    StatPaths()
    {
        dir_ = std::filesystem::temp_directory_path() / ("tpkit-statsnoop-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        existing = (dir_ / "tpk-stat me").string();
        missing = (dir_ / "tpk-missing").string();
        std::ofstream(existing) << "tpkit\n";
    }
    ~StatPaths()
    {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    std::string existing, missing;

private:
    std::filesystem::path dir_;
};

// Each call by its own number: what libc's stat() uses differs between libcs and versions.
std::unique_ptr<ScriptedChild> stater(const StatPaths& paths)
{
    const char* existing = paths.existing.c_str();
    const char* missing = paths.missing.c_str();
    return std::make_unique<ScriptedChild>("tpk-stater", std::function<int()>{}, [=] {
        struct stat st;
        struct statfs sfs;
        struct statx stx;
        if (syscall(SYS_newfstatat, AT_FDCWD, existing, &st, 0) != 0)
            return 1;
        if (syscall(SYS_stat, missing, &st) != -1 || errno != ENOENT)
            return 2;
        if (syscall(SYS_lstat, existing, &st) != 0)
            return 3;
        if (syscall(SYS_statfs, existing, &sfs) != 0)
            return 4;
        if (syscall(SYS_statx, AT_FDCWD, existing, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) != 0)
            return 5;
        return 0;
    });
}

// sys_enter_ and sys_exit_ of statfs, newstat, statx, newfstatat and newlstat.
constexpr std::size_t statsnoop_links = 10;

} // namespace

TEST(StatsnoopExact, EachCallOnceWithItsResultAndPath)
{
    TPKIT_REQUIRE_LIVE();
    StatPaths paths;
    auto child = stater(paths);
    const std::string pid = std::to_string(child->pid());
    ToolRun all({tpkit::live::tool_path("statsnoop"), "--json", "-p", pid});
    ToolRun failed({tpkit::live::tool_path("statsnoop"), "--json", "-x", "-p", pid});
    for (ToolRun* tool : {&all, &failed})
        ASSERT_TRUE(tool->wait_until_attached(statsnoop_links, 20s)) << tool->stderr_text();
    ASSERT_EQ(child->go_and_wait(), 0);
    ASSERT_TRUE(all.wait_for_line(
        [](const std::string& l) { return l.find("\"statx\"") != std::string::npos; }, 20s))
        << all.stderr_text();
    ASSERT_TRUE(failed.wait_for_line(
        [](const std::string& l) { return l.find("\"newstat\"") != std::string::npos; }, 20s))
        << failed.stderr_text();
    for (ToolRun* tool : {&all, &failed}) {
        ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
        EXPECT_EQ(tool->lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    }

    struct Expected {
        std::string syscall;
        int ret, err;
        std::string path;
        int dfd;
        unsigned flags;
    };
    const std::vector<Expected> expected{
        {"newfstatat", 0, 0, paths.existing, AT_FDCWD, 0},
        {"newstat", -1, ENOENT, paths.missing, AT_FDCWD, 0},
        {"newlstat", 0, 0, paths.existing, AT_FDCWD, 0},
        {"statfs", 0, 0, paths.existing, AT_FDCWD, 0},
        {"statx", 0, 0, paths.existing, AT_FDCWD, AT_SYMLINK_NOFOLLOW},
    };
    // Only that process was traced: the whole output is known.
    auto check = [&](const ToolRun& tool, const std::vector<Expected>& want) {
        const auto& lines = tool.lines();
        ASSERT_EQ(lines.size(), want.size() + 1); // and the "lost" line
        for (std::size_t i = 0; i < want.size(); i++) {
            auto e = nlohmann::json::parse(lines[i]);
            EXPECT_EQ(e["syscall"], want[i].syscall) << lines[i];
            EXPECT_EQ(e["ret"], want[i].ret) << lines[i];
            EXPECT_EQ(e["err"], want[i].err) << lines[i];
            EXPECT_EQ(e["path"], want[i].path) << lines[i];
            EXPECT_EQ(e["path_cut"], 0) << lines[i];
            EXPECT_EQ(e["dfd"], want[i].dfd) << lines[i];
            EXPECT_EQ(e["flags"], want[i].flags) << lines[i];
            EXPECT_EQ(e["pid"], child->pid()) << lines[i];
            EXPECT_EQ(e["comm"], "tpk-stater") << lines[i];
        }
    };
    check(all, expected);
    std::vector<Expected> expected_failed;
    std::copy_if(expected.begin(), expected.end(), std::back_inserter(expected_failed),
                 [](const Expected& x) { return x.err; });
    check(failed, expected_failed);
}

TEST(StatsnoopExact, TextRowsWithSyscallNames)
{
    TPKIT_REQUIRE_LIVE();
    StatPaths paths;
    auto child = stater(paths);
    const std::string pid = std::to_string(child->pid());
    ToolRun tool({tpkit::live::tool_path("statsnoop"), "-s", "-p", pid});
    ASSERT_TRUE(tool.wait_until_attached(statsnoop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child->go_and_wait(), 0);
    ASSERT_TRUE(tool.wait_for_line([](const std::string& l) { return l.find(" statx ") != std::string::npos; }, 20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    auto row = [&](int ret, int err, const char* call, const std::string& path) {
        return fmt::format("{:>7} tpk-stater       {:>4} {:>4} {:<10} {}", pid, ret, err, call, path);
    };
    const std::vector<std::string> expected{
        row(0, 0, "newfstatat", paths.existing), row(-1, ENOENT, "newstat", paths.missing),
        row(0, 0, "newlstat", paths.existing),   row(0, 0, "statfs", paths.existing),
        row(0, 0, "statx", paths.existing),
    };
    const auto& lines = tool.lines();
    ASSERT_EQ(lines.size(), 1 + expected.size()) << tool.stderr_text(); // the header, a row each
    EXPECT_EQ(lines[0], "TIME         PID COMM              RET  ERR SYSCALL    PATH");
    const std::size_t time_width = std::string("HH:MM:SS ").size();
    for (std::size_t i = 0; i < expected.size(); i++) {
        ASSERT_GT(lines[i + 1].size(), time_width);
        EXPECT_EQ(lines[i + 1].substr(time_width), expected[i]);
    }
}
