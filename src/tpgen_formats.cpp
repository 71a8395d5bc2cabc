// Where tpgen reads format files from: live tracefs, a directory, or a tarball.
#include "tpkit/error.hpp"
#include "tpkit/tpgen.hpp"

#include <fnmatch.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

extern char** environ;

namespace fs = std::filesystem;

namespace tpkit::tpgen {
namespace {

bool is_tarball(const fs::path& path)
{
    std::string name = path.filename().string();
    for (std::string_view ext : {".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.zst"})
        if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
            return true;
    return false;
}

std::string strip_tar_suffix(std::string name)
{
    for (std::string_view ext : {".tar.gz", ".tar.xz", ".tar.zst", ".tgz", ".tar"})
        if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
            return name.substr(0, name.size() - ext.size());
    return name;
}

// Runs `tar -xf FILE -C DIR`; tar knows every compression, and the tarball is ours to trust no
// more than any other input: it is unpacked into a fresh private directory.
void untar(const fs::path& file, const fs::path& dir)
{
    std::string f = file.string(), d = dir.string();
    const char* argv[] = {"tar", "-xf", f.c_str(), "-C", d.c_str(), nullptr};
    pid_t pid;
    int err = posix_spawnp(&pid, "tar", nullptr, nullptr, const_cast<char* const*>(argv), environ);
    if (err)
        throw Error(Exit::failure, "cannot run tar: " + std::string(std::strerror(err)));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw Error(Exit::unknown_target, "cannot unpack " + file.string() + " with tar");
}

// The directory whose children are the systems.
fs::path events_root(const fs::path& dir)
{
    if (fs::is_directory(dir / "events"))
        return dir / "events";
    return dir;
}

} // namespace

FormatSet::FormatSet(fs::path root, fs::path temp, std::string label)
    : root_(std::move(root)), temp_(std::move(temp)), label_(std::move(label))
{
}

FormatSet::FormatSet(FormatSet&& other) noexcept
    : root_(std::move(other.root_)), temp_(std::move(other.temp_)), label_(std::move(other.label_))
{
    other.temp_.clear();
}

FormatSet::~FormatSet()
{
    if (!temp_.empty()) {
        std::error_code ec;
        fs::remove_all(temp_, ec);
    }
}

FormatSet FormatSet::open(const fs::path& dir_or_tarball)
{
    std::error_code ec;
    if (fs::is_directory(dir_or_tarball, ec))
        return FormatSet(events_root(dir_or_tarball), {},
                         fs::absolute(dir_or_tarball).lexically_normal().filename().string());
    if (!fs::is_regular_file(dir_or_tarball, ec) || !is_tarball(dir_or_tarball))
        throw Error(Exit::unknown_target,
                    "no format files at " + dir_or_tarball.string() +
                        " (expected a directory of <system>/<event>/format or a tarball of one)");
    std::string pattern = (fs::temp_directory_path() / "tpgen-formats-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
        throw Error(Exit::failure, "cannot create a temporary directory: " +
                                       std::string(std::strerror(errno)));
    FormatSet set{fs::path(pattern), fs::path(pattern),
                  strip_tar_suffix(dir_or_tarball.filename().string())};
    untar(dir_or_tarball, set.temp_);
    set.root_ = events_root(set.temp_);
    return set;
}

FormatSet FormatSet::live() { return FormatSet(tracefs_root() / "events", {}, "tracefs"); }

std::vector<TracepointName> FormatSet::events() const
{
    std::vector<TracepointName> names;
    std::error_code ec;
    for (const auto& system : fs::directory_iterator(root_, ec)) {
        if (!system.is_directory())
            continue;
        for (const auto& event : fs::directory_iterator(system.path(), ec))
            if (fs::is_regular_file(event.path() / "format"))
                names.push_back({system.path().filename().string(),
                                 event.path().filename().string()});
    }
    if (ec)
        throw Error(Exit::unknown_target, "cannot list " + root_.string() + ": " + ec.message());
    std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
        return std::tie(a.system, a.event) < std::tie(b.system, b.event);
    });
    return names;
}

bool FormatSet::has(const TracepointName& name) const
{
    return fs::is_regular_file(root_ / name.system / name.event / "format");
}

EventFormat FormatSet::read(const TracepointName& name) const
{
    if (!has(name))
        throw Error(Exit::unknown_target, "no event " + name.str() + " in " + label_);
    try {
        return read_format(root_ / name.system / name.event / "format");
    } catch (const FormatError& e) {
        throw Error(Exit::failure, e.what());
    }
}

std::vector<TracepointName> expand(const std::vector<std::string>& patterns,
                                   const std::vector<const FormatSet*>& sets)
{
    std::vector<TracepointName> all;
    std::set<std::pair<std::string, std::string>> known;
    for (const FormatSet* set : sets)
        for (auto& name : set->events())
            if (known.insert({name.system, name.event}).second)
                all.push_back(std::move(name));
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return std::tie(a.system, a.event) < std::tie(b.system, b.event);
    });

    std::vector<TracepointName> out;
    std::set<std::pair<std::string, std::string>> taken;
    for (const std::string& pattern : patterns) {
        TracepointName want = parse_tracepoint_name(pattern);
        bool matched = false;
        for (const auto& name : all) {
            if (fnmatch(want.system.c_str(), name.system.c_str(), 0) != 0 ||
                fnmatch(want.event.c_str(), name.event.c_str(), 0) != 0)
                continue;
            matched = true;
            if (taken.insert({name.system, name.event}).second)
                out.push_back(name);
        }
        if (!matched)
            throw Error(Exit::unknown_target, "no event matches '" + pattern + "'");
    }
    return out;
}

} // namespace tpkit::tpgen
