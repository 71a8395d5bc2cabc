// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/bpf/program_stats.hpp"

#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>

namespace tpkit {

namespace {

std::string read_whole(const std::string& path)
{
    std::ifstream file(path);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

std::string fdinfo_of(int fd)
{
    return read_whole("/proc/self/fdinfo/" + std::to_string(fd));
}

std::uint64_t field(std::string_view fdinfo, std::string_view name)
{
    for (std::size_t at = 0; at < fdinfo.size();) {
        std::size_t end = fdinfo.find('\n', at);
        if (end == std::string_view::npos)
            end = fdinfo.size();
        std::string_view line = fdinfo.substr(at, end - at);
        at = end + 1;
        if (line.size() <= name.size() || line.substr(0, name.size()) != name || line[name.size()] != ':')
            continue;
        line.remove_prefix(name.size() + 1);
        while (!line.empty() && (line.front() == '\t' || line.front() == ' '))
            line.remove_prefix(1);
        std::uint64_t value = 0;
        std::from_chars(line.data(), line.data() + line.size(), value);
        return value;
    }
    return 0;
}

} // namespace

ProgramStats parse_program_fdinfo(std::string_view fdinfo)
{
    ProgramStats stats;
    stats.runs = field(fdinfo, "run_cnt");
    stats.run_time_ns = field(fdinfo, "run_time_ns");
    stats.recursion_misses = field(fdinfo, "recursion_misses");
    return stats;
}

std::vector<ProgramStats> program_stats(const std::vector<bpf_object*>& objects)
{
    std::vector<ProgramStats> stats;
    for (bpf_object* obj : objects) {
        bpf_program* prog;
        bpf_object__for_each_program(prog, obj)
        {
            const int fd = bpf_program__fd(prog);
            if (fd < 0)
                continue; // not loaded (autoload off)
            ProgramStats s = parse_program_fdinfo(fdinfo_of(fd));
            s.name = bpf_program__name(prog);
            stats.push_back(std::move(s));
        }
    }
    return stats;
}

std::uint64_t process_recursion_misses(std::string_view process)
{
    const std::string proc = "/proc/" + std::string(process);
    std::uint64_t misses = 0;
    std::set<std::uint64_t> counted; // program IDs: a program may have several descriptors
    DIR* dir = opendir((proc + "/fd").c_str());
    if (!dir)
        return 0;
    while (const dirent* entry = readdir(dir)) {
        const std::string_view fd = entry->d_name;
        if (fd.empty() || fd.front() == '.')
            continue;
        char target[32];
        const std::string link = proc + "/fd/" + std::string(fd);
        const ssize_t n = readlink(link.c_str(), target, sizeof(target));
        if (n <= 0 || std::string_view(target, static_cast<std::size_t>(n)) != "anon_inode:bpf-prog")
            continue;
        const std::string info = read_whole(proc + "/fdinfo/" + std::string(fd));
        if (counted.insert(field(info, "prog_id")).second)
            misses += field(info, "recursion_misses");
    }
    closedir(dir);
    return misses;
}

std::string skipped_runs_message(std::string_view tool, std::uint64_t runs)
{
    return fmt::format("{}: {} runs of its BPF programs skipped by the kernel (another BPF program was "
                       "running on that CPU): the events of those runs are missing",
                       tool, runs);
}

std::uint64_t SkippedRuns::report()
{
    const std::uint64_t now = process_recursion_misses();
    const std::uint64_t n = now - std::exchange(seen_, now);
    if (n)
        fmt::print(stderr, "{}\n", skipped_runs_message(tool_, n));
    return n;
}

} // namespace tpkit
