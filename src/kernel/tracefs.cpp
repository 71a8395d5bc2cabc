// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/kernel/tracefs.hpp"

#include "tpkit/support/error.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fs = std::filesystem;

namespace tpkit {
namespace {

constexpr long tracefs_magic = 0x74726163;
constexpr long debugfs_magic = 0x64626720;

bool is_tracefs(const fs::path& dir)
{
    struct statfs st{};
    return statfs(dir.c_str(), &st) == 0 && st.f_type == tracefs_magic;
}

// Every tool reads events/ (formats, and the event IDs libbpf needs to attach). tracefs is
// usually mode 0700: without this check an unprivileged run reports unknown tracepoints or a
// failed attach instead of the reason.
void check_events_readable(const fs::path& root)
{
    const fs::path events = root / "events";
    int fd = open(events.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return;
    }
    int err = errno;
    std::string message = fmt::format("cannot read {}: {}", events.string(), std::strerror(err));
    if (err != EACCES && err != EPERM) // e.g. EMFILE: a limit, not a lack of privileges
        throw Error(Exit::failure, message);
    struct stat st{};
    if (stat(root.c_str(), &st) == 0) {
        std::string who = (st.st_mode & 077) == 0 ? (st.st_uid == 0 ? std::string("root")
                                                                   : fmt::format("uid {}", st.st_uid))
                          : (st.st_mode & 07) == 0 ? fmt::format("uid {} and gid {}", st.st_uid, st.st_gid)
                                                   : std::string();
        if (!who.empty())
            message += fmt::format(": tracefs is readable by {} only (or with CAP_DAC_READ_SEARCH "
                                   "or CAP_DAC_OVERRIDE)", who);
    }
    throw Error(Exit::no_privileges, message);
}

fs::path find_or_mount()
{
    const fs::path primary = "/sys/kernel/tracing";
    const fs::path legacy = "/sys/kernel/debug/tracing";
    if (is_tracefs(primary)) {
        check_events_readable(primary);
        return primary;
    }
    if (is_tracefs(legacy)) {
        check_events_readable(legacy);
        return legacy;
    }
    if (geteuid() != 0)
        throw Error(Exit::no_privileges,
                    "tracefs is not mounted at /sys/kernel/tracing and only root can mount it");
    if (mount("tracefs", primary.c_str(), "tracefs", 0, nullptr) != 0)
        throw Error(Exit::no_privileges, fmt::format("cannot mount tracefs at {}: {}",
                                                     primary.string(), std::strerror(errno)));
    fmt::print(stderr, "tpkit: mounted tracefs at {}\n", primary.string());
    return primary;
}

} // namespace

const fs::path& tracefs_root()
{
    static const fs::path root = find_or_mount();
    return root;
}

TracepointName parse_tracepoint_name(std::string_view text)
{
    auto sep = text.find_first_of(":/");
    if (sep == std::string_view::npos || sep == 0 || sep + 1 == text.size() ||
        text.find_first_of(":/", sep + 1) != std::string_view::npos)
        throw Error(Exit::usage,
                    fmt::format("bad tracepoint name '{}': expected SYSTEM:EVENT", text));
    return {std::string(text.substr(0, sep)), std::string(text.substr(sep + 1))};
}

fs::path event_dir(const TracepointName& name)
{
    fs::path dir = tracefs_root() / "events" / name.system / name.event;
    std::error_code ec;
    const fs::file_status status = fs::status(dir, ec);
    if (fs::is_directory(status))
        return dir;
    // An error other than "not found" (a name too long for a file cannot be an event either).
    if (!fs::status_known(status) && ec != std::errc::filename_too_long)
        throw_read_error(dir.string(), ec);
    throw unknown_tracepoint(name);
}

Error unknown_tracepoint(const TracepointName& name)
{
    std::vector<std::string> events;
    std::error_code ec;
    for (const auto& system : fs::directory_iterator(tracefs_root() / "events", ec))
        if (system.is_directory(ec))
            for (const auto& event : fs::directory_iterator(system.path(), ec))
            if (event.is_directory(ec))
                events.push_back(system.path().filename().string() + ":" +
                                 event.path().filename().string());
    const std::string nearest = nearest_name(name.str(), events);
    return Error(Exit::unknown_target,
                 fmt::format("unknown tracepoint '{}'{}", name.str(),
                             nearest.empty() ? "" : fmt::format(" (did you mean {}?)", nearest)));
}

bool event_exists(const TracepointName& name)
{
    std::error_code ec;
    return fs::is_directory(tracefs_root() / "events" / name.system / name.event, ec);
}

void require_event(const TracepointName& name, std::string_view which)
{
    if (!event_exists(name))
        throw Error(Exit::unknown_target,
                    fmt::format("this kernel has no {} tracepoint ({})", name.str(), which));
}

void require_syscall_events(std::string_view syscall)
{
    for (const char* side : {"enter", "exit"})
        require_event({"syscalls", fmt::format("sys_{}_{}", side, syscall)},
                      "kernels built with CONFIG_FTRACE_SYSCALLS have it");
}

bool attaches_bpf(const TracepointName& name) { return name.system != "ftrace"; }

} // namespace tpkit
