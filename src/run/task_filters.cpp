// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/run/task_filters.hpp"

#include "tpkit/support/error.hpp"

#include <bpf/libbpf.h>
#include <fmt/core.h>
#include <linux/magic.h>
#include <mntent.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

namespace tpkit {
std::string cgroup2_mount()
{
    std::string where;
    if (FILE* mounts = setmntent("/proc/self/mounts", "r")) {
        while (mntent* m = getmntent(mounts))
            if (std::strcmp(m->mnt_type, "cgroup2") == 0) {
                where = m->mnt_dir;
                break;
            }
        endmntent(mounts);
    }
    return where;
}

std::uint64_t cgroup_id(const std::string& path)
{
    struct statfs fs{};
    struct stat st{};
    if (statfs(path.c_str(), &fs) != 0 || stat(path.c_str(), &st) != 0)
        throw Error(Exit::usage, fmt::format("--cgroup {}: {}", path, std::strerror(errno)));
    if (fs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode)) {
        std::string mount = cgroup2_mount();
        throw Error(Exit::usage,
                    fmt::format("--cgroup {}: not a cgroup v2 directory ({})", path,
                                mount.empty() ? "cgroup v2 is not mounted"
                                              : "cgroup v2 is mounted at " + mount));
    }
    // On cgroup2, a directory's inode number is the cgroup's ID.
    return st.st_ino;
}

namespace {

// The Tgid: line of /proc/ID/status (ID a process's or any thread's), nothing when there is no
// such task.
std::optional<std::uint32_t> task_tgid(std::uint32_t id)
{
    std::ifstream status(fmt::format("/proc/{}/status", id));
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("Tgid:", 0) == 0)
            return static_cast<std::uint32_t>(std::strtoul(line.c_str() + 5, nullptr, 10));
    return std::nullopt;
}

} // namespace

std::uint32_t target_cpu(const CommonOptions& options)
{
    if (!options.cpu)
        return UINT32_MAX;
    const int cpus = libbpf_num_possible_cpus();
    if (cpus > 0 && *options.cpu >= static_cast<std::uint32_t>(cpus))
        throw Error(Exit::unknown_target, fmt::format("unknown CPU {}: this machine has CPUs 0 to {}",
                                                      *options.cpu, cpus - 1));
    return *options.cpu;
}

std::uint32_t excluded_tgid(const CommonOptions& options)
{
    return options.include_self ? 0 : static_cast<std::uint32_t>(getpid());
}

void require_target_tasks(const CommonOptions& options)
{
    if (options.pid) {
        auto tgid = task_tgid(options.pid);
        if (!tgid)
            throw Error(Exit::unknown_target, fmt::format("no process with PID {}", options.pid));
        if (*tgid != options.pid)
            throw Error(Exit::unknown_target,
                        fmt::format("{} is a thread of process {}, not a process: -p {} for the "
                                    "process, -t {} for the thread",
                                    options.pid, *tgid, *tgid, options.pid));
    }
    if (options.tid && !task_tgid(options.tid))
        throw Error(Exit::unknown_target, fmt::format("no thread with TID {}", options.tid));
}

} // namespace tpkit
