#include "tpkit/tracefs.hpp"

#include "tpkit/error.hpp"

#include <fmt/core.h>
#include <sys/mount.h>
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

fs::path find_or_mount()
{
    const fs::path primary = "/sys/kernel/tracing";
    const fs::path legacy = "/sys/kernel/debug/tracing";
    if (is_tracefs(primary))
        return primary;
    if (is_tracefs(legacy))
        return legacy;
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
    if (!fs::is_directory(dir, ec)) {
        if (access((tracefs_root() / "events").c_str(), R_OK | X_OK) != 0)
            throw Error(Exit::no_privileges,
                        fmt::format("cannot read {}: {}", (tracefs_root() / "events").string(),
                                    std::strerror(errno)));
        throw Error(Exit::unknown_target, fmt::format("unknown tracepoint '{}'", name.str()));
    }
    return dir;
}

bool attaches_bpf(const TracepointName& name) { return name.system != "ftrace"; }

} // namespace tpkit
