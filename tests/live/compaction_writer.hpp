// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Compactions a test starts: a child of a known PID and comm writes 1 to
// /proc/sys/vm/compact_memory (or a node's compact file), which compacts every populated zone
// of the nodes in the writer's own context; and the zones /proc/zoneinfo shows.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpkit::live {

inline constexpr const char* compaction_writer_comm = "tpk-compact";
inline constexpr const char* compact_memory = "/proc/sys/vm/compact_memory";

// A zone as /proc/zoneinfo shows it: its node, name and watermarks (with their boost).
struct Zone {
    int node = 0;
    std::string name;
    std::uint64_t min = 0, low = 0, high = 0, present = 0;
    bool operator==(const Zone&) const = default;
};

// The zones compaction visits, in the order it does: the populated ones (present pages),
// by node, by index. `node` -1: every node's.
inline std::vector<Zone> populated_zones(int node)
{
    std::ifstream in("/proc/zoneinfo");
    std::vector<Zone> zones;
    static const std::regex heading(R"(^Node (\d+), zone\s+(\S+))");
    static const std::regex value(R"(^\s+(min|low|high|present)\s+(\d+)$)");
    bool in_zone_head = false;
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, heading)) {
            zones.push_back({std::stoi(m[1]), m[2], 0, 0, 0, 0});
            in_zone_head = true;
        } else if (in_zone_head && std::regex_search(line, m, value)) {
            auto v = std::stoull(m[2]);
            (m[1] == "min" ? zones.back().min : m[1] == "low" ? zones.back().low
                                               : m[1] == "high" ? zones.back().high
                                                                : zones.back().present) = v;
            if (m[1] == "present")
                in_zone_head = false; // the per-CPU and statistics parts follow
        }
    }
    std::vector<Zone> populated;
    for (const auto& z : zones)
        if (z.present > 0 && (node < 0 || z.node == node))
            populated.push_back(z);
    return populated;
}

inline std::int64_t monotonic_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A child named compaction_writer_comm that, once told to go, writes "1" to `file` and reports when its
// write began and ended (CLOCK_MONOTONIC). Before, it leaves every other page of 32 MiB of its
// own in use, movable pages among free ones: something for the compaction to migrate, also on a
// freshly booted machine.
class CompactionWriter {
public:
    explicit CompactionWriter(const std::string& file)
    {
        int go[2], done[2];
        if (pipe(go) || pipe(done))
            throw std::runtime_error("pipe");
        pid_ = fork();
        if (pid_ == 0) {
            close(go[1]);
            close(done[0]);
            prctl(PR_SET_NAME, compaction_writer_comm);
            const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE)), pages = (32u << 20) / page;
            void* area = mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (area != MAP_FAILED) {
                std::memset(area, 1, pages * page);
                for (std::size_t i = 0; i < pages; i += 2)
                    madvise(static_cast<char*>(area) + i * page, page, MADV_DONTNEED);
            }
            char c;
            if (read(go[0], &c, 1) != 1)
                _exit(1);
            int fd = open(file.c_str(), O_WRONLY);
            std::int64_t span[3] = {monotonic_ns(), 0, 0};
            span[2] = fd >= 0 && write(fd, "1", 1) == 1;
            span[1] = monotonic_ns();
            if (write(done[1], span, sizeof(span)) != sizeof(span))
                _exit(1);
            _exit(0);
        }
        close(go[0]);
        close(done[1]);
        go_ = go[1];
        done_ = done[0];
    }
    ~CompactionWriter()
    {
        close(go_);
        close(done_);
        if (pid_ > 0 && !reaped_)
            waitpid(pid_, nullptr, 0);
    }
    pid_t pid() const { return pid_; }

    // Starts the write and waits for it: whether it succeeded, and when it began and ended.
    bool write_and_wait(std::int64_t& begin_ns, std::int64_t& end_ns)
    {
        std::int64_t span[3] = {};
        if (write(go_, "g", 1) != 1 || read(done_, span, sizeof(span)) != sizeof(span))
            return false;
        begin_ns = span[0];
        end_ns = span[1];
        int status = 0;
        waitpid(pid_, &status, 0);
        reaped_ = true;
        return span[2] == 1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }

private:
    pid_t pid_ = -1;
    bool reaped_ = false;
    int go_ = -1, done_ = -1;
};

} // namespace tpkit::live
