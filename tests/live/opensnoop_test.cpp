// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// opensnoop against real opens from a known process: each open, openat and openat2 seen once, in
// order, with its file descriptor or errno, flags and mode; failures alone with -x; a path longer
// than the kernel takes marked as cut; its own opens with --include-self only.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;

namespace {

constexpr std::size_t opensnoop_links = 6;    // sys_enter_ and sys_exit_ of open, openat, openat2
constexpr std::size_t path_bytes_kept = 4095; // of a longer path, by the tool

// An existing file and a missing one in a directory of their own, removed afterwards.
class OpenPaths {
public:
    OpenPaths()
    {
        dir_ = std::filesystem::temp_directory_path() / ("tpkit-opensnoop-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        existing = (dir_ / "tpk-open me").string();
        missing = (dir_ / "tpk-missing").string();
        std::ofstream(existing) << "tpkit\n";
    }
    ~OpenPaths()
    {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    std::string existing, missing;

private:
    std::filesystem::path dir_;
};

// A process that makes the opens below when told, and the descriptors it got, which it reports
// through a pipe.
class Opener {
public:
    Opener()
    {
        if (pipe2(report_, O_CLOEXEC) != 0)
            throw std::system_error(errno, std::generic_category(), "pipe2");
        const char* existing = paths.existing.c_str();
        const char* missing = paths.missing.c_str();
        const char* long_path = too_long.c_str();
        const int report = report_[1];
        child_ = std::make_unique<ScriptedChild>("tpk-opener", std::function<int()>{}, [=] {
            int fds[3];
            fds[0] = static_cast<int>(syscall(SYS_openat, AT_FDCWD, existing, O_RDONLY | O_CLOEXEC));
            if (fds[0] < 0)
                return 1;
            fds[1] = static_cast<int>(syscall(SYS_open, missing, O_RDONLY));
            if (fds[1] != -1 || errno != ENOENT)
                return 2;
            open_how how{};
            how.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW;
            fds[2] = static_cast<int>(syscall(SYS_openat2, AT_FDCWD, existing, &how, sizeof(how)));
            if (fds[2] < 0)
                return 3;
            if (syscall(SYS_openat, AT_FDCWD, existing, O_WRONLY | O_CREAT | O_EXCL, 0640) != -1 ||
                errno != EEXIST)
                return 4;
            if (syscall(SYS_openat, AT_FDCWD, long_path, O_RDONLY) != -1 || errno != ENAMETOOLONG)
                return 5;
            return write(report, fds, sizeof(fds)) == sizeof(fds) ? 0 : 6;
        });
        close(report_[1]);
    }
    ~Opener() { close(report_[0]); }

    pid_t pid() const { return child_->pid(); }

    // Makes the opens: the descriptors of the first three, or nothing when the child did not
    // make them as planned.
    std::optional<std::array<int, 3>> open_all()
    {
        std::array<int, 3> fds{};
        if (child_->go_and_wait() != 0 ||
            read(report_[0], fds.data(), sizeof(fds)) != ssize_t(sizeof(fds)))
            return std::nullopt;
        return fds;
    }

    OpenPaths paths;
    // Longer than PATH_MAX: refused by the kernel, and cut by the tool at path_bytes_kept.
    const std::string too_long = "/" + std::string(5000, 'l');

private:
    int report_[2]{-1, -1};
    std::unique_ptr<ScriptedChild> child_;
};

std::vector<nlohmann::json> events_of(const ToolRun& tool)
{
    std::vector<nlohmann::json> events;
    for (const auto& line : tool.lines()) {
        auto e = nlohmann::json::parse(line, nullptr, false);
        if (e.is_object() && e.contains("path"))
            events.push_back(e);
    }
    return events;
}

struct ExpectedOpen {
    std::string call;
    int fd, err;
    unsigned flags;
    nlohmann::json mode;
    std::string path;
    int path_cut = 0;
};

} // namespace

TEST(OpensnoopExact, EachOpenOnceWithItsResultFlagsAndMode)
{
    TPKIT_REQUIRE_LIVE();
    Opener child;
    const OpenPaths& paths = child.paths;
    const std::string& too_long = child.too_long;
    const std::string pid = std::to_string(child.pid());
    ToolRun all({tpkit::live::tool_path("opensnoop"), "--json", "-p", pid});
    ToolRun failed({tpkit::live::tool_path("opensnoop"), "--json", "-x", "-p", pid});
    for (ToolRun* tool : {&all, &failed})
        ASSERT_TRUE(tool->wait_until_attached(opensnoop_links, 20s)) << tool->stderr_text();
    auto opened = child.open_all();
    ASSERT_TRUE(opened);
    const auto& fds = *opened;
    for (ToolRun* tool : {&all, &failed}) {
        // The last open's line, then the rest of the output.
        ASSERT_TRUE(tool->wait_for_line(
            [](const std::string& l) { return l.find("\"path_cut\":1") != std::string::npos; }, 20s))
            << tool->stderr_text();
        ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
        EXPECT_EQ(tool->lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    }

    const std::vector<ExpectedOpen> expected{
        {"openat", fds[0], 0, O_RDONLY | O_CLOEXEC, nullptr, paths.existing},
        {"open", -1, ENOENT, O_RDONLY, nullptr, paths.missing},
        {"openat2", fds[2], 0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, nullptr, paths.existing},
        {"openat", -1, EEXIST, O_WRONLY | O_CREAT | O_EXCL, 0640, paths.existing},
        {"openat", -1, ENAMETOOLONG, O_RDONLY, nullptr, too_long.substr(0, path_bytes_kept), 1},
    };
    const auto expected_failed = static_cast<std::size_t>(
        std::count_if(expected.begin(), expected.end(), [](const ExpectedOpen& x) { return x.err; }));
    // Only that process was traced: the whole output is known.
    auto all_events = events_of(all), failed_events = events_of(failed);
    ASSERT_EQ(all_events.size(), expected.size());
    ASSERT_EQ(failed_events.size(), expected_failed);
    std::size_t next_failed = 0;
    for (std::size_t i = 0; i < expected.size(); i++) {
        const ExpectedOpen& x = expected[i];
        std::vector<nlohmann::json> seen{all_events[i]};
        if (x.err)
            seen.push_back(failed_events[next_failed++]);
        for (const auto& e : seen) {
            EXPECT_EQ(e["call"], x.call) << e;
            EXPECT_EQ(e["fd"], x.fd) << e;
            EXPECT_EQ(e["err"], x.err) << e;
            EXPECT_EQ(e["flags"], x.flags) << e;
            EXPECT_EQ(e["mode"], x.mode) << e;
            EXPECT_EQ(e["path"], x.path) << e;
            EXPECT_EQ(e["path_cut"], x.path_cut) << e;
            EXPECT_EQ(e["dfd"], AT_FDCWD) << e;
            EXPECT_EQ(e["pid"], child.pid()) << e;
            EXPECT_EQ(e["tid"], child.pid()) << e;
            EXPECT_EQ(e["comm"], "tpk-opener") << e;
        }
    }
}

TEST(OpensnoopExact, ExtendedTextRows)
{
    TPKIT_REQUIRE_LIVE();
    Opener child;
    const OpenPaths& paths = child.paths;
    const std::string& too_long = child.too_long;
    const std::string pid = std::to_string(child.pid());
    ToolRun tool({tpkit::live::tool_path("opensnoop"), "-e", "-p", pid});
    ASSERT_TRUE(tool.wait_until_attached(opensnoop_links, 20s)) << tool.stderr_text();
    auto opened = child.open_all();
    ASSERT_TRUE(opened);
    const auto& fds = *opened;
    ASSERT_TRUE(tool.wait_for_line([](const std::string& l) { return l.find("…") != std::string::npos; }, 20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    auto row = [&](int fd, int err, const char* flags, const char* mode, const std::string& path) {
        return fmt::format("{:>7} tpk-opener       {:>3} {:>3} {} {:<4} {}", pid, fd, err, flags, mode, path);
    };
    const std::vector<std::string> expected{
        row(fds[0], 0, "02000000", "n/a", paths.existing),
        row(-1, ENOENT, "00000000", "n/a", paths.missing),
        row(fds[2], 0, "02400000", "n/a", paths.existing),
        row(-1, EEXIST, "00000301", "0640", paths.existing),
        row(-1, ENAMETOOLONG, "00000000", "n/a", too_long.substr(0, path_bytes_kept) + "…"),
    };
    const auto& lines = tool.lines();
    ASSERT_EQ(lines.size(), 1 + expected.size()) << tool.stderr_text(); // the header, a row each
    EXPECT_EQ(lines[0], "TIME         PID COMM              FD ERR FLAGS    MODE PATH");
    const std::size_t time_width = std::string("HH:MM:SS ").size();
    for (std::size_t i = 0; i < expected.size(); i++) {
        ASSERT_GT(lines[i + 1].size(), time_width);
        EXPECT_EQ(lines[i + 1].substr(time_width), expected[i]);
    }
}

TEST(OpensnoopExact, FullPathOfRelativeOpens)
{
    TPKIT_REQUIRE_LIVE();
    OpenPaths paths;
    const std::string dir = std::filesystem::canonical(std::filesystem::path(paths.existing).parent_path());
    const char* dir_path = dir.c_str();
    const char* missing = paths.missing.c_str();
    // Relative to the working directory and to a directory's descriptor; an absolute path last.
    ScriptedChild child(
        "tpk-opener", [=] { return chdir(dir_path) == 0 ? 0 : 1; },
        [=] {
            int dir_fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, ".", O_PATH | O_DIRECTORY));
            if (dir_fd < 0)
                return 1;
            if (syscall(SYS_openat, AT_FDCWD, "tpk-open me", O_RDONLY) < 0)
                return 2;
            if (syscall(SYS_openat, dir_fd, "tpk-open me", O_RDONLY) < 0)
                return 3;
            if (syscall(SYS_openat, dir_fd, "no/such", O_RDONLY) != -1)
                return 4;
            if (syscall(SYS_openat, dir_fd, missing, O_RDONLY) != -1)
                return 5;
            return 0;
        });
    const std::string pid = std::to_string(child.pid());
    ToolRun tool({tpkit::live::tool_path("opensnoop"), "--json", "-F", "-p", pid});
    ASSERT_TRUE(tool.wait_until_attached(opensnoop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_TRUE(tool.wait_for_line(
        [&](const std::string& l) { return l.find(paths.missing) != std::string::npos; }, 20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    // Only that process was traced: the whole output is known.
    auto events = events_of(tool);
    const std::vector<std::pair<std::string, int>> expected{
        {dir + "/.", 0},
        {dir + "/tpk-open me", 0},
        {dir + "/tpk-open me", 0},
        {dir + "/no/such", ENOENT},
        {paths.missing, ENOENT},
    };
    ASSERT_EQ(events.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); i++) {
        EXPECT_EQ(events[i]["path"], expected[i].first) << events[i];
        EXPECT_EQ(events[i]["err"], expected[i].second) << events[i];
        EXPECT_EQ(events[i]["path_cut"], 0) << events[i];
    }
}

// The tool's own opens (the tracefs files libbpf reads as it attaches one tracepoint after the
// other) are no opens of the system it watches: left out, unless --include-self.
TEST(OpensnoopSelf, OwnOpensOnlyWithIncludeSelf)
{
    TPKIT_REQUIRE_LIVE();
    EXPECT_EQ(tpkit::live::own_events("opensnoop", {"--comm", "opensnoop"}, false),
              (std::vector<std::map<std::string, std::string>>{}));
    auto own = tpkit::live::own_events("opensnoop", {"--comm", "opensnoop"}, true);
    EXPECT_TRUE(std::any_of(own.begin(), own.end(), [](auto& e) { return e["path"].ends_with("/id"); }))
        << own.size() << " events, the first's path: " << (own.empty() ? "" : own[0]["path"] + own[0]["error"]);
}
