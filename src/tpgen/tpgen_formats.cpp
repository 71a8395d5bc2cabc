// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Where tpgen reads format files from: live tracefs, a directory, or a tarball.
#include "tpkit/support/error.hpp"
#include "tpgen/tpgen.hpp"

#include <fmt/format.h>
#include <fnmatch.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>

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

// The directory whose children are the systems.
fs::path events_root(const fs::path& dir)
{
    if (fs::is_directory(dir / "events"))
        return dir / "events";
    return dir;
}

// What a tarball may make us hold: a kernel's format files are a few KiB each and a few MiB in
// all (6.18: 2323 files, 4 MiB).
constexpr std::uint64_t max_format_size = 1 << 20;
constexpr std::uint64_t max_formats_total = 256 << 20;
constexpr std::uint64_t max_name_size = 1 << 16; // GNU long names and pax headers

constexpr std::size_t block = 512;

struct GzCloser {
    void operator()(gzFile f) const { gzclose(f); }
};

// A tar stream (plain or gzip, which zlib reads alike) read in place, in memory: the format
// files of a tarball without unpacking anything or running tar. ustar, GNU long names and pax
// path/size records; other entry kinds are skipped.
class TarReader {
public:
    explicit TarReader(const fs::path& file) : file_(file)
    {
        in_.reset(gzopen(file.c_str(), "rb"));
        if (!in_)
            fail(std::string("cannot open it: ") + std::strerror(errno));
        gzbuffer(in_.get(), 1 << 17);
    }

    [[noreturn]] void fail(const std::string& why) const
    {
        throw Error(Exit::unknown_target, "cannot read format files from " + file_.string() + ": " + why);
    }

    // Calls take(path, size) for each regular file; take returns whether it wants the data, which
    // then goes to data(). Other entries are skipped.
    template <class Take, class Data>
    void each_file(Take&& take, Data&& data)
    {
        std::string long_name;
        std::uint64_t long_size = 0;
        bool has_long_size = false, skip_next = false;
        for (bool first = true;; first = false) {
            std::array<unsigned char, block> h{};
            std::size_t got = read_some(h.data(), block);
            if (got == 0 && first)
                fail("not a tar archive (empty)");
            if (got == 0)
                return; // no end-of-archive blocks: tolerated, like tar does
            if (got < block)
                fail(first ? "not a tar archive" : fmt::format("truncated at byte {}", offset_));
            if (std::all_of(h.begin(), h.end(), [](unsigned char c) { return c == 0; }))
                return;
            if (!checksum_ok(h)) {
                if (first)
                    fail(compression_hint(h));
                fail(fmt::format("not a tar archive (bad header checksum at byte {})", offset_ - block));
            }
            std::uint64_t size = has_long_size ? long_size : number(h.data() + 124, 12);
            if (size >= std::uint64_t(1) << 62)
                fail(fmt::format("not a tar archive (bad size at byte {})", offset_ - block));
            char type = static_cast<char>(h[156]);
            std::string name = long_name.empty() ? header_name(h) : long_name;
            bool skip = skip_next;
            long_name.clear();
            has_long_size = false;
            skip_next = false;
            if (type == 'L' || type == 'x') {
                if (size > max_name_size) {
                    skip_bytes(padded(size));
                    skip_next = true; // its name is not one of a format file
                    continue;
                }
                std::string text = read_bytes(size);
                skip_bytes(padded(size) - size);
                if (type == 'L')
                    long_name = text.substr(0, text.find('\0'));
                else
                    has_long_size = parse_pax(text, long_name, long_size);
                continue;
            }
            bool regular = type == '0' || type == '\0' || type == '7';
            if (regular && !skip && take(name, size)) {
                data(read_bytes(size));
                skip_bytes(padded(size) - size);
            } else {
                skip_bytes(padded(size));
            }
        }
    }

private:
    static std::uint64_t padded(std::uint64_t size) { return (size + block - 1) / block * block; }

    std::size_t read_some(void* buf, std::size_t n)
    {
        std::size_t done = 0;
        while (done < n) {
            int got = gzread(in_.get(), static_cast<char*>(buf) + done, static_cast<unsigned>(n - done));
            if (got < 0) {
                int err = 0;
                const char* what = gzerror(in_.get(), &err);
                fail(err == Z_ERRNO ? std::strerror(errno) : what);
            }
            if (got == 0)
                break;
            done += static_cast<std::size_t>(got);
        }
        offset_ += done;
        return done;
    }

    std::string read_bytes(std::uint64_t n)
    {
        std::string out(static_cast<std::size_t>(n), '\0');
        if (read_some(out.data(), out.size()) != out.size())
            fail(fmt::format("truncated at byte {}", offset_));
        return out;
    }

    void skip_bytes(std::uint64_t n)
    {
        sink_.resize(1 << 16);
        while (n > 0) {
            std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(n, sink_.size()));
            if (read_some(sink_.data(), chunk) != chunk) {
                // The end-of-archive padding may be cut short; a member may not.
                fail(fmt::format("truncated at byte {}", offset_));
            }
            n -= chunk;
        }
    }

    static bool checksum_ok(const std::array<unsigned char, block>& h)
    {
        std::uint64_t sum = 0;
        std::int64_t signed_sum = 0; // some old tars summed signed chars
        for (std::size_t i = 0; i < block; ++i) {
            unsigned char c = i >= 148 && i < 156 ? ' ' : h[i];
            sum += c;
            signed_sum += static_cast<signed char>(c);
        }
        std::uint64_t want = number(h.data() + 148, 8, true);
        return want == sum || static_cast<std::int64_t>(want) == signed_sum;
    }

    std::string compression_hint(const std::array<unsigned char, block>& h) const
    {
        if (std::memcmp(h.data(), "\xFD" "7zXZ", 5) == 0)
            return "it is compressed with xz: only .tar and .tar.gz are read (unpack it and give "
                   "the directory)";
        if (std::memcmp(h.data(), "\x28\xB5\x2F\xFD", 4) == 0)
            return "it is compressed with zstd: only .tar and .tar.gz are read (unpack it and give "
                   "the directory)";
        if (std::memcmp(h.data(), "BZh", 3) == 0)
            return "it is compressed with bzip2: only .tar and .tar.gz are read (unpack it and give "
                   "the directory)";
        return "not a tar archive";
    }

    // An octal field (NUL- or space-terminated), or GNU's base-256 for large sizes.
    static std::uint64_t number(const unsigned char* p, std::size_t n, bool checksum = false)
    {
        if (!checksum && (p[0] & 0x80)) {
            std::uint64_t v = 0;
            for (std::size_t i = 1; i < n; ++i) {
                if (v >> 56)
                    return UINT64_MAX;
                v = v << 8 | p[i];
            }
            return (p[0] & 0x40) ? UINT64_MAX : v; // negative: nonsense
        }
        std::size_t i = 0;
        while (i < n && p[i] == ' ')
            ++i;
        std::uint64_t v = 0;
        for (; i < n && p[i] >= '0' && p[i] <= '7'; ++i) {
            if (v >> 60)
                return UINT64_MAX;
            v = v * 8 + (p[i] - '0');
        }
        return v;
    }

    static std::string field(const unsigned char* p, std::size_t n)
    {
        const char* c = reinterpret_cast<const char*>(p);
        return std::string(c, strnlen(c, n));
    }

    static std::string header_name(const std::array<unsigned char, block>& h)
    {
        std::string name = field(h.data(), 100);
        // POSIX ustar splits long names into a prefix; GNU's header ("ustar  ") has no prefix.
        if (std::memcmp(h.data() + 257, "ustar\0", 6) == 0) {
            std::string prefix = field(h.data() + 345, 155);
            if (!prefix.empty())
                name = prefix + "/" + name;
        }
        return name;
    }

    // Records "LEN key=value\n" of a pax extended header: path and size of the next entry;
    // true when it gives the size.
    bool parse_pax(std::string_view text, std::string& path, std::uint64_t& size) const
    {
        bool has_size = false;
        while (!text.empty()) {
            std::size_t len = 0, i = 0;
            while (i < text.size() && text[i] >= '0' && text[i] <= '9' && len < text.size())
                len = len * 10 + static_cast<std::size_t>(text[i++] - '0');
            if (i == 0 || i >= text.size() || text[i] != ' ' || len <= i + 1 || len > text.size() ||
                text[len - 1] != '\n')
                fail(fmt::format("bad pax header before byte {}", offset_));
            std::string_view record = text.substr(i + 1, len - i - 2);
            text.remove_prefix(len);
            auto eq = record.find('=');
            if (eq == std::string_view::npos)
                continue;
            std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
            if (key == "path") {
                path = std::string(value);
            } else if (key == "size") {
                std::uint64_t v = 0;
                for (char c : value) {
                    if (c < '0' || c > '9' || v > UINT64_MAX / 10 - 1)
                        fail(fmt::format("bad pax size before byte {}", offset_));
                    v = v * 10 + static_cast<std::uint64_t>(c - '0');
                }
                size = v;
                has_size = true;
            }
        }
        return has_size;
    }

    fs::path file_;
    std::unique_ptr<gzFile_s, GzCloser> in_;
    std::uint64_t offset_ = 0; // bytes of the tar stream read so far
    std::vector<char> sink_;   // what skipped entries are read into
};

// "events/sched/sched_process_fork/format" or "./sched/sched_process_fork/format": its parts
// without empty and "." ones; nothing when a part is "..".
std::optional<std::vector<std::string>> path_parts(std::string_view path)
{
    std::vector<std::string> parts;
    while (!path.empty()) {
        auto slash = path.find('/');
        std::string_view part = path.substr(0, slash);
        path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
        if (part.empty() || part == ".")
            continue;
        if (part == "..")
            return std::nullopt;
        parts.emplace_back(part);
    }
    return parts;
}

} // namespace

FormatSet::FormatSet(fs::path root, std::string label)
    : root_(std::move(root)), label_(std::move(label))
{
}

FormatSet::FormatSet(FormatSet&&) noexcept = default;
FormatSet::~FormatSet() = default;

FormatSet FormatSet::open(const fs::path& dir_or_tarball)
{
    std::error_code ec;
    if (fs::is_directory(dir_or_tarball, ec))
        return FormatSet(events_root(dir_or_tarball),
                         fs::absolute(dir_or_tarball).lexically_normal().filename().string());
    if (!fs::is_regular_file(dir_or_tarball, ec) || !is_tarball(dir_or_tarball))
        throw Error(Exit::unknown_target,
                    "no format files at " + dir_or_tarball.string() +
                        " (expected a directory of <system>/<event>/format or a tarball of one)");
    FormatSet set({}, strip_tar_suffix(dir_or_tarball.filename().string()));
    set.archive_ = dir_or_tarball.string();
    // Both layouts are gathered; as for a directory, an events/ at the top means its contents.
    std::map<std::pair<std::string, std::string>, Member> top, under_events;
    bool has_events_dir = false;
    std::uint64_t total = 0;
    std::map<std::pair<std::string, std::string>, Member>* into = nullptr;
    std::pair<std::string, std::string> key;
    std::string member_path;
    TarReader tar(dir_or_tarball);
    tar.each_file(
        [&](const std::string& path, std::uint64_t size) {
            auto parts = path_parts(path);
            if (!parts)
                return false;
            if (parts->size() >= 2 && (*parts)[0] == "events")
                has_events_dir = true;
            bool rooted = parts->size() == 4 && (*parts)[0] == "events";
            if ((parts->size() != 3 && !rooted) || parts->back() != "format")
                return false;
            if (size > max_format_size)
                tar.fail(fmt::format("{} is {} bytes, more than a format file's {} MiB", path, size,
                                     max_format_size >> 20));
            if ((total += size) > max_formats_total)
                tar.fail(fmt::format("its format files hold more than {} MiB",
                                     max_formats_total >> 20));
            into = rooted ? &under_events : &top;
            key = {(*parts)[rooted], (*parts)[rooted + 1]};
            member_path = path;
            return true;
        },
        [&](std::string text) { (*into)[key] = Member{member_path, std::move(text)}; });
    set.members_ = std::move(has_events_dir ? under_events : top);
    return set;
}

FormatSet FormatSet::live() { return FormatSet(tracefs_root() / "events", "tracefs"); }

std::vector<TracepointName> FormatSet::events() const
{
    std::vector<TracepointName> names;
    if (root_.empty()) {
        for (const auto& [key, member] : members_)
            names.push_back({key.first, key.second});
        return names;
    }
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
    if (root_.empty())
        return members_.count({name.system, name.event}) != 0;
    return fs::is_regular_file(root_ / name.system / name.event / "format");
}

EventFormat FormatSet::read(const TracepointName& name) const
{
    if (!has(name))
        throw Error(Exit::unknown_target, "no event " + name.str() + " in " + label_);
    try {
        if (!root_.empty())
            return read_format(root_ / name.system / name.event / "format");
        // Named as linkers name archive members: "linux-6.18.tar.gz(sched/.../format):LINE".
        const Member& m = members_.at({name.system, name.event});
        EventFormat format = parse_format(m.text, archive_ + "(" + m.path + ")");
        format.system = name.system;
        return format;
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
