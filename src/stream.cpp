// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/stream.hpp"

#include "tpkit/error.hpp"

#include <fmt/core.h>
#include <linux/magic.h>
#include <mntent.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>
#include <cstring>

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

} // namespace tpkit
