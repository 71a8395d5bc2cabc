// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// capable against real capability checks: chroot(2) asks for CAP_SYS_CHROOT in the caller's
// user namespace, so a child calling it as root is allowed and one calling it as nobody is
// denied; the tool must report exactly that check, once, with the caller's uid and the verdict.
// On kernels without capability:cap_capable (before 6.14: Debian's 6.1) it must say so. Its own
// checks show with --include-self only.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <tpkit/kernel/tracefs.hpp>

#include <fmt/format.h>

#include <linux/capability.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;

namespace {

constexpr uid_t nobody = 65534;

constexpr std::size_t capable_links = 1; // cap_capable

bool kernel_has_cap_capable() { return tpkit::event_exists({"capability", "cap_capable"}); }

// The user namespace the test runs in, as the kernel numbers it (the tool's user_ns).
std::string own_user_ns()
{
    struct stat st {};
    if (stat("/proc/self/ns/user", &st) != 0)
        return "";
    return std::to_string(st.st_ino);
}

// A child that becomes `uid` (prepare), then calls chroot("/") `times` times (act). As nobody the
// calls fail with EPERM, which act expects.
ScriptedChild chrooter(const std::string& comm, uid_t uid, int times)
{
    return ScriptedChild(
        comm,
        [uid] {
            if (uid != 0 && syscall(SYS_setresuid, uid, uid, uid) != 0)
                return 1;
            return 0;
        },
        [uid, times] {
            for (int i = 0; i < times; i++) {
                long ret = syscall(SYS_chroot, "/");
                if (uid == 0 ? ret != 0 : (ret != -1 || errno != EPERM))
                    return 2;
            }
            return 0;
        });
}

// The tool's JSON events of `pid` for CAP_SYS_CHROOT.
std::vector<std::map<std::string, std::string>> chroot_checks(const ToolRun& tool, pid_t pid)
{
    std::vector<std::map<std::string, std::string>> out;
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (e["pid"] == std::to_string(pid) && e["cap"] == std::to_string(CAP_SYS_CHROOT))
            out.push_back(e);
    }
    return out;
}

} // namespace

TEST(CapableExact, ChrootIsAllowedForRootAndDeniedForNobody)
{
    TPKIT_REQUIRE_LIVE();
    if (!kernel_has_cap_capable()) {
        ToolRun tool({tpkit::live::tool_path("capable")});
        EXPECT_EQ(tool.wait(tpkit::live::patient(20s)), 4);
        EXPECT_EQ(tool.stderr_text(), "capable: this kernel has no capability:cap_capable "
                                      "tracepoint (Linux 6.14 and later have it)\n");
        return;
    }
    for (uid_t uid : {uid_t(0), nobody}) {
        SCOPED_TRACE(fmt::format("uid {}", uid));
        constexpr std::size_t chroots = 1;
        ScriptedChild child = chrooter("tpk-chroot", uid, chroots);
        ToolRun tool({tpkit::live::tool_path("capable"), "--json", "-p", std::to_string(child.pid())});
        ASSERT_TRUE(tool.wait_until_attached(capable_links, 20s)) << tool.stderr_text();
        ASSERT_EQ(child.go_and_wait(), 0);
        ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

        auto checks = chroot_checks(tool, child.pid());
        ASSERT_EQ(checks.size(), chroots) << fmt::format("{}", fmt::join(tool.lines(), "\n"));
        auto& e = checks[0];
        EXPECT_EQ(e["name"], "CAP_SYS_CHROOT");
        EXPECT_EQ(e["verdict"], uid == 0 ? "allow" : "deny");
        EXPECT_EQ(e["uid"], std::to_string(uid));
        EXPECT_EQ(e["tid"], std::to_string(child.pid()));
        EXPECT_EQ(e["comm"], "tpk-chroot");
        EXPECT_EQ(e["user_ns"], own_user_ns());
        EXPECT_EQ(e["audit"], "null");
        EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    }
}

TEST(CapableExact, UniqueShowsEachVerdictOncePerProcess)
{
    TPKIT_REQUIRE_LIVE();
    if (!kernel_has_cap_capable())
        GTEST_SKIP() << "this kernel has no capability:cap_capable (checked by the test above)";
    constexpr std::size_t chroots = 5; // each denied: one check shown
    ScriptedChild child = chrooter("tpk-chroot", nobody, chroots);
    ToolRun tool({tpkit::live::tool_path("capable"), "--json", "--unique", "pid", "-p",
                  std::to_string(child.pid())});
    ASSERT_TRUE(tool.wait_until_attached(capable_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    auto checks = chroot_checks(tool, child.pid());
    ASSERT_EQ(checks.size(), 1u) << fmt::format("{}", fmt::join(tool.lines(), "\n"));
    EXPECT_EQ(checks[0]["verdict"], "deny");
}

TEST(CapableExact, TextRowHasBccColumns)
{
    TPKIT_REQUIRE_LIVE();
    if (!kernel_has_cap_capable())
        GTEST_SKIP() << "this kernel has no capability:cap_capable (checked by the first test)";
    constexpr std::size_t chroots = 1;
    ScriptedChild child = chrooter("tpk-chroot", nobody, chroots);
    ToolRun tool({tpkit::live::tool_path("capable"), "-x", "-p", std::to_string(child.pid())});
    ASSERT_TRUE(tool.wait_until_attached(capable_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const auto& lines = tool.lines();
    ASSERT_GE(lines.size(), 1u + chroots); // the header, a row per chroot
    EXPECT_EQ(lines[0], "TIME     UID   PID     TID     COMM             CAP     NAME                 "
                        "AUDIT   VERDICT USER_NS");
    std::string row;
    for (const auto& l : lines)
        if (l.find("CAP_SYS_CHROOT") != std::string::npos)
            row = l;
    constexpr std::size_t time_width = 8; // "HH:MM:SS"
    ASSERT_GT(row.size(), time_width + 1) << fmt::format("{}", fmt::join(lines, "\n"));
    EXPECT_EQ(row.substr(time_width), fmt::format(" {:<5} {:<7} {:<7} {:<16} {:<7} {:<20} {:<7} {:<7} {}",
                                         nobody, child.pid(), child.pid(), "tpk-chroot", CAP_SYS_CHROOT,
                                         "CAP_SYS_CHROOT", "-", "deny", own_user_ns()));
}

// The tool's own checks (CAP_SETPCAP as it empties its bounding set once attached, CAP_BPF and
// CAP_SYS_ADMIN as it sets up) are no checks of the system it watches: left out, unless
// --include-self.
TEST(CapableSelf, OwnChecksOnlyWithIncludeSelf)
{
    TPKIT_REQUIRE_LIVE();
    if (!kernel_has_cap_capable())
        GTEST_SKIP() << "this kernel has no capability:cap_capable (checked by the first test)";
    EXPECT_EQ(tpkit::live::own_events("capable", {"--comm", "capable"}, false),
              (std::vector<std::map<std::string, std::string>>{}));
    auto own = tpkit::live::own_events("capable", {"--comm", "capable"}, true);
    EXPECT_TRUE(std::any_of(own.begin(), own.end(), [](auto& e) { return e["name"] == "CAP_SETPCAP"; }))
        << own.size() << " events, the first: " << (own.empty() ? "" : own[0]["name"] + own[0]["error"]);
}
