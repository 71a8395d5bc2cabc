// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/bpf/skeleton.hpp"

#include "tpkit/kernel/tracefs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <linux/btf.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace tpkit {
namespace {

std::vector<std::string>& traced_list()
{
    static std::vector<std::string> events;
    return events;
}

bool libbpf_verbose = false;
thread_local StopBeforeLoad* innermost_stop = nullptr;

int print_libbpf(enum libbpf_print_level level, const char* format, va_list args)
{
    // Without -v, failures surface as our own one-line errors; -v shows libbpf's details.
    if (!libbpf_verbose)
        return 0;
    (void)level;
    return std::vfprintf(stderr, format, args);
}

} // namespace

void set_libbpf_verbose(bool verbose)
{
    libbpf_verbose = verbose;
    libbpf_set_print(print_libbpf);
}

CoreBtf core_btf_for(const void* elf, std::size_t size, const std::string& what)
{
    CoreBtf core_btf = CoreBtf::for_object(elf, size);
    if (libbpf_verbose && core_btf.path())
        fmt::print(stderr, "tpkit: {} relocates against {} of the kernel's {} BTF types\n", what,
                   core_btf.types_kept(), core_btf.kernel_types());
    else if (libbpf_verbose && !core_btf.why_whole().empty())
        fmt::print(stderr, "tpkit: {} relocates against the kernel's whole BTF: {}\n", what,
                   core_btf.why_whole());
    return core_btf;
}

Link attach_tracepoint(bpf_program* prog, const std::string& system, const std::string& event)
{
    event_dir({system, event}); // a clear "unknown tracepoint" rather than libbpf's ENOENT
    bpf_link* link = bpf_program__attach_tracepoint(prog, system.c_str(), event.c_str());
    if (!link)
        throw_libbpf_error(Exit::kernel_refused,
                           "cannot attach to tracepoint " + system + ":" + event, errno);
    note_traced(system + ":" + event);
    return Link(link, &bpf_link__destroy);
}

void require_tracefs_for(const bpf_object* obj)
{
    bpf_program* prog = nullptr;
    while ((prog = bpf_object__next_program(obj, prog))) {
        if (bpf_program__autoload(prog) && bpf_program__type(prog) == BPF_PROG_TYPE_TRACEPOINT) {
            tracefs_root();
            return;
        }
    }
}

void note_attached_programs(const bpf_object* obj)
{
    bpf_program* prog = nullptr;
    while ((prog = bpf_object__next_program(obj, prog))) {
        std::string_view section = bpf_program__section_name(prog);
        auto slash = section.find('/');
        if (!bpf_program__autoload(prog) || slash == std::string_view::npos)
            continue;
        std::string_view kind = section.substr(0, slash), target = section.substr(slash + 1);
        if (kind == "tracepoint" || kind == "tp") {
            auto sep = target.find('/');
            if (sep != std::string_view::npos)
                note_traced(fmt::format("{}:{}", target.substr(0, sep), target.substr(sep + 1)));
        } else if (kind == "raw_tp" || kind == "raw_tracepoint") {
            note_traced(fmt::format("rawtracepoint:{}", target));
        }
    }
}

StopBeforeLoad::StopBeforeLoad() : outer_(std::exchange(innermost_stop, this)) {}

StopBeforeLoad::~StopBeforeLoad() { innermost_stop = outer_; }

bool StopBeforeLoad::active() { return innermost_stop != nullptr; }

MapMemoryCharge StopBeforeLoad::stop_here(MapMemoryCharge charge)
{
    if (!innermost_stop)
        return charge;
    innermost_stop->charges_.push_back(std::move(charge));
    throw StoppedBeforeLoad{};
}

namespace {

// From this many links on, detach_all() leaves the close of their perf events to a process of
// its own (start_perf_event_closer). The close of a classic tracepoint's perf event waits for a
// grace period under the kernel's event_mutex, one after another whatever the threads, where
// the close of its BPF link, which takes the program off, overlaps with the others'. Detaching
// everything thus costs the exit a grace period per classic tracepoint, the hand-off a fixed
// cost whatever the number; below this, where the detach is still short, the tool detaches
// everything before it exits, as the skeletons of the one-purpose tools (12 links at most)
// always do. The figures: bench/BENCHMARKS.md, "Big globs".
constexpr std::size_t close_elsewhere_from = 16;

bool is_perf_event(int fd_dir, const char* name)
{
    static constexpr char perf_event[] = "anon_inode:[perf_event]";
    char target[sizeof(perf_event)];
    ssize_t n = readlinkat(fd_dir, name, target, sizeof(target));
    return n == sizeof(perf_event) - 1 && std::memcmp(target, perf_event, sizeof(perf_event) - 1) == 0;
}

// Calls f(fd_dir, fd, name) for each open descriptor of this process but fd_dir, the open
// /proc/self/fd (name: fd's entry there). System calls only; false when /proc is not there.
template <class F>
bool for_each_fd(F f)
{
    int fd_dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_dir < 0)
        return false;
    alignas(dirent64) char entries[4096];
    for (ssize_t n; (n = getdents64(fd_dir, entries, sizeof(entries))) > 0;)
        for (ssize_t at = 0; at < n;) {
            const auto* entry = reinterpret_cast<const dirent64*>(entries + at);
            at += entry->d_reclen;
            int fd = 0;
            for (const char* c = entry->d_name; *c; c++)
                fd = *c >= '0' && *c <= '9' ? fd * 10 + (*c - '0') : -1000000;
            if (fd >= 0 && fd != fd_dir)
                f(fd_dir, fd, entry->d_name);
        }
    close(fd_dir);
    return true;
}

// The closer. Forked from a process that may have other threads: system calls only. Tells the
// tool on `ready` when it holds nothing but the perf events, then closes them once `released`
// says that the tool's own references are gone (else its closes would not be the last).
[[noreturn]] void close_perf_events(int ready, int released)
{
    setsid(); // a session of its own: the terminal's Ctrl-C and hang-up are not for it
    prctl(PR_SET_NAME, "tpkit-detach");
    // Killed, it leaves the rest of the closes to the kernel as it exits: the same wait.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (chdir("/") != 0) {
        // keeps the directory busy: harmless
    }
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2; fd++) // no reader of the tool's output waits for it
        null >= 0 ? dup2(null, fd) : close(fd);
    // Everything but the perf events: the tool's close of each BPF link then takes its program
    // off, and no file, pipe or socket of the tool stays open here.
    bool listed = for_each_fd([&](int fd_dir, int fd, const char* name) {
        if (fd > 2 && fd != ready && fd != released && !is_perf_event(fd_dir, name))
            close(fd);
    });
    if (!listed) // perf events cannot be told apart: the tool closes them itself
        _exit(1);
    const char done = 1;
    ssize_t written = write(ready, &done, 1);
    (void)written;
    close(ready);
    char byte;
    while (read(released, &byte, 1) < 0 && errno == EINTR) {
    }
    close(released);
    // The perf events, one after another (/proc/PID/fd shows those left).
    for_each_fd([](int, int fd, const char*) {
        if (fd > 2)
            close(fd);
    });
    _exit(0);
}

// Starts a closer of this process's perf events, which outlives it and keeps nothing else open,
// and returns once it holds them: the fd to close once this process has closed its own (its
// links), or -1 without a closer. The closer is a grandchild, so that nobody waits for it and a
// process that lives on (the exporter) is left no zombie.
int start_perf_event_closer()
{
    int ready[2], released[2];
    if (pipe2(ready, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(released, O_CLOEXEC) != 0) {
        close(ready[0]);
        close(ready[1]);
        return -1;
    }
    pid_t child = fork();
    if (child == 0) {
        close(ready[0]);
        close(released[1]);
        if (fork() == 0)
            close_perf_events(ready[1], released[0]);
        _exit(0);
    }
    close(ready[1]);
    close(released[0]);
    char done = 0;
    if (child > 0) {
        while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
        }
        while (read(ready[0], &done, 1) < 0 && errno == EINTR) {
        }
    }
    close(ready[0]);
    if (done != 1) { // no closer: this process closes everything
        close(released[1]);
        return -1;
    }
    return released[1];
}

} // namespace

void detach_all(std::vector<Link>& links)
{
    const int closer = links.size() >= close_elsewhere_from ? start_perf_event_closer() : -1;
    constexpr std::size_t max_threads = 64;
    std::size_t threads = std::min(max_threads, links.size());
    if (threads > 1) {
        std::atomic<std::size_t> next{0};
        std::vector<std::thread> workers;
        for (std::size_t t = 0; t < threads; t++)
            workers.emplace_back([&] {
                for (std::size_t i; (i = next++) < links.size();)
                    links[i].reset();
            });
        for (auto& w : workers)
            w.join();
    }
    links.clear();
    if (closer >= 0)
        close(closer); // the closer's closes are now the last
}

void detach_skeleton(bpf_object_skeleton* skeleton)
{
    std::vector<Link> links;
    for (int i = 0; i < skeleton->prog_cnt; i++) {
        bpf_link** link = skeleton->progs[i].link;
        if (link && *link) {
            links.emplace_back(*link, &bpf_link__destroy);
            *link = nullptr; // the skeleton's own destroy then skips it
        }
    }
    detach_all(links);
}

bool kernel_has_raw_tracepoint(const std::string& event)
{
    return kernel_btf_has_type("btf_trace_" + event, BTF_KIND_TYPEDEF);
}

bool kernel_has_ringbuf()
{
    return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1;
}

void note_traced(std::string_view event)
{
    auto& events = traced_list();
    if (std::find(events.begin(), events.end(), event) == events.end())
        events.emplace_back(event);
}

const std::vector<std::string>& traced_events()
{
    return traced_list();
}

} // namespace tpkit
