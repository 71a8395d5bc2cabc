// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// mountsnoop against real calls, made by a child in its own mount namespace (the mounts never
// reach the test's namespace and vanish with the child): every call once, in order, with its
// exact arguments and result.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace std::chrono_literals;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;

namespace {

// An empty directory to mount on, removed afterwards.
class MountPoint {
public:
    MountPoint()
    {
        path_ = (std::filesystem::temp_directory_path() /
                 ("tpkit-mountsnoop-" + std::to_string(getpid())))
                    .string();
        if (mkdir(path_.c_str(), 0700) != 0 && errno != EEXIST)
            throw std::runtime_error("cannot make " + path_);
    }
    ~MountPoint() { rmdir(path_.c_str()); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// The inode number of a process's mount namespace, as /proc/PID/ns/mnt names it.
std::string mnt_ns_of(pid_t pid)
{
    auto link = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/mnt").string();
    auto open = link.find('['), close = link.find(']');
    return link.substr(open + 1, close - open - 1);
}

// Whether this process's root directory is a mount point (in a chroot into a plain directory
// it is not, and the mount tree cannot be made private from there).
bool root_is_a_mount_point()
{
    std::ifstream mountinfo("/proc/self/mountinfo");
    for (std::string line; std::getline(mountinfo, line);) {
        std::istringstream fields(line);
        std::string id, parent, device, root, mount_point;
        if (fields >> id >> parent >> device >> root >> mount_point && mount_point == "/")
            return true;
    }
    return false;
}

#define REQUIRE_ROOT_MOUNT_POINT()                                                             \
    do {                                                                                       \
        if (!root_is_a_mount_point())                                                          \
            GTEST_SKIP() << "/ is not a mount point here (a chroot?): no private mount tree";   \
    } while (0)

// A private copy of the mount tree, with nothing propagating back to the test's.
int own_mount_namespace()
{
    if (unshare(CLONE_NEWNS) != 0)
        return 1;
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return 2;
    return 0;
}

// Runs mountsnoop --json (and `options`) on the child, lets it act, and returns its event lines
// (all of them: only the child is traced) once the line of its last call, whose CALL begins with
// `last`, is in.
std::vector<std::map<std::string, std::string>> events_of(ScriptedChild& child, std::size_t count,
                                                          const std::string& last,
                                                          const std::vector<std::string>& options = {})
{
    std::vector<std::string> argv{tpkit::live::tool_path("mountsnoop"), "--json", "-p",
                                  std::to_string(child.pid())};
    argv.insert(argv.end(), options.begin(), options.end());
    ToolRun tool(argv);
    std::vector<std::map<std::string, std::string>> events;
    // sys_enter_ and sys_exit_ of mount, umount, fsopen, fsconfig, fsmount and move_mount.
    constexpr std::size_t links = 12;
    if (!tool.wait_until_attached(links, 20s)) {
        ADD_FAILURE() << "not attached: " << tool.stderr_text();
        return events;
    }
    EXPECT_EQ(child.go_and_wait(), 0) << "a call did not do what was expected";
    EXPECT_TRUE(tool.wait_for_line(
        [&](const std::string& l) { return tpkit::live::parse_flat_json(l)["call"].rfind(last, 0) == 0; },
        20s))
        << tool.stderr_text();
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const auto& lines = tool.lines();
    EXPECT_EQ(lines.size(), count + 1) << tool.stderr_text();
    EXPECT_EQ(lines.empty() ? "" : lines.back(), "{\"type\":\"lost\",\"lost_events\":0}");
    for (std::size_t i = 0; i + 1 < lines.size(); i++)
        events.push_back(tpkit::live::parse_flat_json(lines[i]));
    return events;
}

struct Expected {
    std::string call, op, source, target, fstype, data, flags, ret;
};

// mnt_ns: read while the child lived (its namespace goes with it).
void expect_events(const std::vector<std::map<std::string, std::string>>& events,
                   const std::vector<Expected>& expected, pid_t pid, const std::string& comm,
                   const std::string& mnt_ns)
{
    ASSERT_EQ(events.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); i++) {
        auto e = events[i];
        const Expected& x = expected[i];
        SCOPED_TRACE(x.call);
        EXPECT_EQ(e["call"], x.call);
        EXPECT_EQ(e["op"], x.op);
        EXPECT_EQ(e["source"], x.source);
        EXPECT_EQ(e["target"], x.target);
        EXPECT_EQ(e["fstype"], x.fstype);
        EXPECT_EQ(e["data"], x.data);
        EXPECT_EQ(e["flags"], x.flags);
        EXPECT_EQ(e["ret"], x.ret);
        EXPECT_EQ(e["pid"], std::to_string(pid));
        EXPECT_EQ(e["tid"], std::to_string(pid));
        EXPECT_EQ(e["comm"], comm);
        EXPECT_EQ(e["mnt_ns"], mnt_ns);
        EXPECT_GT(std::stoull(e["latency_ns"]), 0u);
    }
}

// A child that mounts a tmpfs on `target` and unmounts it, then fails to mount on `missing`, in a
// private namespace; and what mountsnoop shows of it.
struct TmpfsCalls {
    explicit TmpfsCalls(const MountPoint& dir)
        : target(dir.path()), missing(dir.path() + "/missing"),
          mounter("tpk-mounter", [] { return unshare(CLONE_NEWNS) == 0 ? 0 : 1; },
                  [this] {
                      // Private first: nothing this namespace mounts may propagate to the test's.
                      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
                          return 1;
                      if (mount("tpk-source", target.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                                "size=1m,mode=0700") != 0)
                          return 2;
                      if (umount2(target.c_str(), 0) != 0)
                          return 3;
                      if (mount("tpk-source", missing.c_str(), "tmpfs", 0, nullptr) != -1 ||
                          errno != ENOENT)
                          return 4;
                      return 0;
                  }),
          mnt_ns(mnt_ns_of(mounter.pid()))
    {
    }

    // The last call's CALL begins with this.
    std::string last() const { return "mount(\"tpk-source\", \"" + missing; }

    std::vector<Expected> expected() const
    {
        const std::string t = "\"" + target + "\"", m = "\"" + missing + "\"";
        return {
            {"mount(NULL, \"/\", NULL, MS_REC|MS_PRIVATE, NULL) = 0", "mount", "", "/", "", "",
             std::to_string(MS_REC | MS_PRIVATE), "0"},
            {"mount(\"tpk-source\", " + t +
                 ", \"tmpfs\", MS_NOSUID|MS_NODEV, \"size=1m,mode=0700\") = 0",
             "mount", "tpk-source", target, "tmpfs", "size=1m,mode=0700",
             std::to_string(MS_NOSUID | MS_NODEV), "0"},
            {"umount(" + t + ", 0) = 0", "umount", "", target, "", "", "0", "0"},
            {"mount(\"tpk-source\", " + m + ", \"tmpfs\", 0, NULL) = -ENOENT", "mount",
             "tpk-source", missing, "tmpfs", "", "0", std::to_string(-ENOENT)},
        };
    }

    const std::string target, missing;
    ScriptedChild mounter;
    const std::string mnt_ns; // read while the child lives
};

void expect_tmpfs_mount_umount_and_a_failed_mount(const std::vector<std::string>& options)
{
    MountPoint dir;
    TmpfsCalls calls(dir);
    auto events = events_of(calls.mounter, calls.expected().size(), calls.last(), options);
    expect_events(events, calls.expected(), calls.mounter.pid(), "tpk-mounter", calls.mnt_ns);
}

} // namespace

TEST(MountsnoopExact, TmpfsMountUmountAndAFailedMount)
{
    TPKIT_REQUIRE_LIVE();
    REQUIRE_ROOT_MOUNT_POINT();
    expect_tmpfs_mount_umount_and_a_failed_mount({});
}

// Events of varying size through the perf buffer, which rounds records up with stale bytes.
TEST(MountsnoopExact, ThroughThePerfBuffer)
{
    TPKIT_REQUIRE_LIVE();
    REQUIRE_ROOT_MOUNT_POINT();
    expect_tmpfs_mount_umount_and_a_failed_mount({"--perf-buffer"});
}

// -x: the failed call alone.
TEST(MountsnoopExact, FailedCallsOnly)
{
    TPKIT_REQUIRE_LIVE();
    REQUIRE_ROOT_MOUNT_POINT();
    MountPoint dir;
    TmpfsCalls calls(dir);
    const std::vector<Expected> failed{calls.expected().back()};
    auto events = events_of(calls.mounter, failed.size(), calls.last(), {"-x"});
    expect_events(events, failed, calls.mounter.pid(), "tpk-mounter", calls.mnt_ns);
}

TEST(MountsnoopExact, NewMountApiCalls)
{
    TPKIT_REQUIRE_LIVE();
    REQUIRE_ROOT_MOUNT_POINT();
    MountPoint dir;
    const std::string target = dir.path();
    ScriptedChild mounter("tpk-mounter", own_mount_namespace, [&] {
        long fs = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
            return 1;
        if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "1m", 0) != 0)
            return 2;
        if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
            return 3;
        long mnt = syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV);
        if (mnt < 0)
            return 4;
        if (syscall(SYS_move_mount, mnt, "", AT_FDCWD, target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
            return 5;
        if (umount2(target.c_str(), MNT_DETACH) != 0)
            return 6;
        return 0;
    });
    const pid_t pid = mounter.pid();
    const std::string mnt_ns = mnt_ns_of(pid);
    constexpr std::size_t calls = 6; // fsopen, fsconfig twice, fsmount, move_mount, umount
    auto events = events_of(mounter, calls, "umount(");
    ASSERT_EQ(events.size(), calls);
    // The descriptors are the calls' own results.
    const std::string fs = events[0]["ret"], mnt = events[3]["ret"];
    EXPECT_GE(std::stoi(fs), 0);
    EXPECT_GE(std::stoi(mnt), 0);
    const std::string t = "\"" + target + "\"";
    expect_events(
        events,
        {
            {"fsopen(\"tmpfs\", FSOPEN_CLOEXEC) = " + fs, "fsopen", "", "", "tmpfs", "",
             std::to_string(FSOPEN_CLOEXEC), fs},
            {"fsconfig(" + fs + ", FSCONFIG_SET_STRING, \"size\", \"1m\", 0) = 0", "fsconfig", "", "",
             "", "size=1m", "0", "0"},
            {"fsconfig(" + fs + ", FSCONFIG_CMD_CREATE, NULL, NULL, 0) = 0", "fsconfig", "", "", "", "",
             "0", "0"},
            {"fsmount(" + fs + ", FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV) = " + mnt, "fsmount", "", "", "",
             "", std::to_string(FSMOUNT_CLOEXEC), mnt},
            {"move_mount(" + mnt + ", \"\", AT_FDCWD, " + t + ", MOVE_MOUNT_F_EMPTY_PATH) = 0",
             "move_mount", "", target, "", "", std::to_string(MOVE_MOUNT_F_EMPTY_PATH), "0"},
            {"umount(" + t + ", MNT_DETACH) = 0", "umount", "", target, "", "",
             std::to_string(MNT_DETACH), "0"},
        },
        pid, "tpk-mounter", mnt_ns);
}
