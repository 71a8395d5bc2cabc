// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Open-file limits sized from what a BPF object will hold open once loaded and attached.
#include "tpkit/bpf/skeleton.hpp"

#include <bpf/libbpf.h>
#include <fmt/core.h>
#include <sys/resource.h>

#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace tpkit {

namespace {
bool fd_limit_counted = false; // raise_fd_limit_for() ran: the tool counted for all it loads

// Raises the soft limit to NEEDED; a hard limit below it: Error(failure) saying WHO needs it.
void raise_fd_limit_to(std::size_t needed, const std::string& who)
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
        throw Error(Exit::failure,
                    fmt::format("{} about {} open files; the hard limit is {} (ulimit -Hn)", who,
                                needed, static_cast<unsigned long long>(limit.rlim_max)));
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed)
        return;
    limit.rlim_cur = needed;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
        throw Error(Exit::failure, fmt::format("cannot raise the open files limit to {}: {}",
                                               needed, std::strerror(errno)));
}

std::size_t fds_needed(std::size_t events, const bpf_object* obj)
{
    // One loaded and attached instance holds a descriptor per map it creates and per program it
    // loads, one for its BTF, and per program a perf event and a link.
    std::size_t maps = 0, programs = 0;
    bool ringbuf = false, perfbuf = false;
    bpf_map* map;
    bpf_object__for_each_map(map, obj) {
        if (!bpf_map__autocreate(map))
            continue;
        maps++;
        ringbuf |= bpf_map__type(map) == BPF_MAP_TYPE_RINGBUF;
        perfbuf |= bpf_map__type(map) == BPF_MAP_TYPE_PERF_EVENT_ARRAY;
    }
    bpf_program* prog;
    bpf_object__for_each_program(prog, obj)
        programs += bpf_program__autoload(prog) ? 1 : 0;
    std::size_t per_instance = maps + 1 + 3 * programs;
    // Once per tool: what is open already (stdio, inherited), a perf event per CPU when events
    // are read from a perf buffer, and room for the epoll and signal descriptors and for those
    // libbpf opens for a moment while loading.
    std::size_t open_now = 0;
    std::error_code ec;
    for (fs::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec))
        open_now++;
    int cpus = perfbuf && !ringbuf ? libbpf_num_possible_cpus() : 0;
    return std::max<std::size_t>(open_now, 3) + 16 + std::max(cpus, 0) + events * per_instance;
}

} // namespace

void raise_fd_limit_for(std::size_t events, const bpf_object* obj)
{
    fd_limit_counted = true;
    raise_fd_limit_to(fds_needed(events, obj),
                      fmt::format("{} event{}", events, events == 1 ? " needs" : "s need"));
}

void raise_fd_limit_once(const bpf_object* obj, const std::string& what)
{
    if (!fd_limit_counted)
        raise_fd_limit_to(fds_needed(1, obj), "the BPF programs of " + what + " need");
    fd_limit_counted = true;
}

} // namespace tpkit
