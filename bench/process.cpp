// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "process.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <tpkit/process/clock.hpp>

namespace tpbench {

namespace fs = std::filesystem;

MemFile::MemFile() : fd_(memfd_create("tpbench", MFD_CLOEXEC))
{
    if (fd_ < 0)
        throw std::runtime_error(fmt::format("memfd_create: {}", std::strerror(errno)));
}

MemFile::~MemFile()
{
    close(fd_);
}

void MemFile::for_each_line(const std::function<void(std::string_view)>& on_line) const
{
    std::string pending;
    std::vector<char> chunk(1 << 20);
    off_t at = 0;
    for (;;) {
        ssize_t n = pread(fd_, chunk.data(), chunk.size(), at);
        if (n <= 0)
            break;
        at += n;
        std::string_view data(chunk.data(), static_cast<std::size_t>(n));
        std::size_t start = 0;
        for (std::size_t nl; (nl = data.find('\n', start)) != std::string_view::npos; start = nl + 1) {
            if (pending.empty()) {
                on_line(data.substr(start, nl - start));
            } else {
                pending.append(data.substr(start, nl - start));
                on_line(pending);
                pending.clear();
            }
        }
        pending.append(data.substr(start));
    }
    if (!pending.empty())
        on_line(pending);
}

void MemFile::append_until_eof(int fd)
{
    std::vector<char> chunk(1 << 16);
    for (;;) {
        ssize_t n = read(fd, chunk.data(), chunk.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(fd_, chunk.data() + done, static_cast<std::size_t>(n - done));
            if (w <= 0)
                throw std::runtime_error(fmt::format("memfd write: {}", std::strerror(errno)));
            done += w;
        }
    }
}

std::string MemFile::head(std::size_t limit) const
{
    std::string text(limit, '\0');
    ssize_t n = pread(fd_, text.data(), limit, 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

std::string Finished::describe() const
{
    if (timed_out)
        return "did not exit in time (killed)";
    if (!exited)
        return fmt::format("killed by signal {}", code);
    return fmt::format("exit code {}", code);
}

Process::Process(const std::vector<std::string>& argv, int out_fd, int err_fd)
    : start_(Clock::now())
{
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0)
        throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
    if (pid_ == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        int null = open("/dev/null", O_RDONLY);
        dup2(null, 0);
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        execvp(args[0], args.data());
        dprintf(2, "cannot run %s: %s\n", args[0], std::strerror(errno));
        _exit(127);
    }
}

Process::~Process()
{
    if (!finished_) {
        ::kill(pid_, SIGKILL);
        wait(std::chrono::milliseconds(5000));
    }
}

bool Process::running()
{
    if (finished_)
        return false;
    siginfo_t info{};
    // WNOWAIT: look without reaping, so that wait() still gets the rusage. si_pid stays 0
    // while the child runs.
    if (waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return false;
    return info.si_pid == 0;
}

void Process::signal(int sig)
{
    if (!finished_)
        ::kill(pid_, sig);
}

Finished Process::wait(std::chrono::milliseconds timeout)
{
    if (finished_)
        return *finished_;
    Finished f;
    // Sleep in poll() on a pidfd rather than waking up to look: the harness must not steal
    // the CPU from what it measures.
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        int waited = poll(&p, 1, static_cast<int>(timeout.count()));
        close(pidfd);
        if (waited == 0) {
            f.timed_out = true;
            ::kill(pid_, SIGKILL);
        }
    }
    auto deadline = Clock::now() + timeout;
    int status = 0;
    rusage usage{};
    for (;;) {
        pid_t got = wait4(pid_, &status, WNOHANG, &usage);
        if (got == pid_)
            break;
        if (got < 0 && errno != EINTR)
            throw std::runtime_error(fmt::format("wait4: {}", std::strerror(errno)));
        if (Clock::now() > deadline && !f.timed_out) {
            f.timed_out = true;
            ::kill(pid_, SIGKILL);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    f.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    f.exited = WIFEXITED(status);
    f.code = f.exited ? WEXITSTATUS(status) : WTERMSIG(status);
    f.max_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0; // KiB on Linux
    finished_ = f;
    return f;
}

void block_ready_signal()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, nullptr);
}

bool wait_ready_signal(Process& process, std::chrono::milliseconds timeout)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
        timespec slice{0, 20'000'000};
        siginfo_t info{};
        if (sigtimedwait(&set, &info, &slice) == SIGUSR2 && info.si_pid == process.pid())
            return true;
        if (!process.running())
            return false;
    }
    return false;
}

Attachments attachments_of(pid_t pid)
{
    Attachments found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fmt::format("/proc/{}/fd", pid), ec)) {
        int fd;
        try {
            fd = std::stoi(entry.path().filename().string());
        } catch (...) {
            continue;
        }
        std::string target = fs::read_symlink(entry.path(), ec).string();
        if (target.find("perf_event") != std::string::npos)
            found.perf_event_fds++;
        char name[256];
        __u32 len = sizeof(name), prog_id = 0, fd_type = 0;
        __u64 offset = 0, addr = 0;
        if (bpf_task_fd_query(pid, fd, 0, name, &len, &prog_id, &fd_type, &offset, &addr) != 0)
            continue;
        if (fd_type != BPF_FD_TYPE_TRACEPOINT && fd_type != BPF_FD_TYPE_RAW_TRACEPOINT)
            continue;
        if (std::find(found.prog_ids.begin(), found.prog_ids.end(), prog_id) == found.prog_ids.end())
            found.prog_ids.push_back(prog_id);
    }
    return found;
}

bool wait_attached(Process& process, int programs, std::chrono::milliseconds timeout,
                   Attachments& found)
{
    auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
        if (!process.running())
            return false;
        found = attachments_of(process.pid());
        if (programs > 0 && static_cast<int>(found.prog_ids.size()) >= programs)
            return true;
        if (programs == 0 && found.perf_event_fds > 0) {
            // perf stat enables its counters right after opening them all.
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
}

BpfRunStats::BpfRunStats() : fd_(bpf_enable_stats(BPF_STATS_RUN_TIME)) {}

BpfRunStats::~BpfRunStats()
{
    if (fd_ >= 0)
        close(fd_);
}

BpfRunStats::Sample BpfRunStats::sample(const std::vector<std::uint32_t>& prog_ids)
{
    Sample total;
    for (std::uint32_t id : prog_ids) {
        int fd = bpf_prog_get_fd_by_id(id);
        if (fd < 0)
            continue;
        bpf_prog_info info{};
        __u32 len = sizeof(info);
        if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
            total.run_time_ns += info.run_time_ns;
            total.run_cnt += info.run_cnt;
        }
        close(fd);
    }
    return total;
}

std::string find_program(std::string_view name)
{
    std::string path_env = getenv("PATH") ? getenv("PATH") : "";
    path_env += ":/usr/sbin:/sbin:/usr/local/sbin";
    std::size_t at = 0;
    while (at <= path_env.size()) {
        std::size_t end = path_env.find(':', at);
        if (end == std::string::npos)
            end = path_env.size();
        std::string dir = path_env.substr(at, end - at);
        if (!dir.empty()) {
            std::string candidate = dir + "/" + std::string(name);
            if (access(candidate.c_str(), X_OK) == 0)
                return candidate;
        }
        at = end + 1;
    }
    return {};
}

std::string libbpf_tool(std::string_view name)
{
    std::string path = fmt::format("/usr/sbin/{}", name);
    return access(path.c_str(), X_OK) == 0 ? path : std::string{};
}

std::optional<Usage> usage_of(pid_t pid)
{
    const std::string proc = fmt::format("/proc/{}", pid);
    std::ifstream status(proc + "/status");
    std::optional<Usage> usage;
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0)
            usage = Usage{std::strtod(line.c_str() + 6, nullptr) / 1024, 0}; // kB
    if (!usage)
        return std::nullopt;
    std::error_code ec;
    std::map<std::uint64_t, double> map_bytes; // by map id: a map shared by several fds once
    for (fs::directory_iterator it(proc + "/fd", ec), end; !ec && it != end; it.increment(ec)) {
        usage->fds++;
        std::ifstream info(proc + "/fdinfo/" + it->path().filename().string());
        double memlock = 0;
        std::optional<std::uint64_t> id;
        for (std::string line; std::getline(info, line);) {
            if (line.rfind("memlock:", 0) == 0)
                memlock = std::strtod(line.c_str() + 8, nullptr);
            else if (line.rfind("map_id:", 0) == 0)
                id = std::strtoull(line.c_str() + 7, nullptr, 10);
        }
        if (id)
            map_bytes[*id] = memlock;
    }
    for (const auto& [id, bytes] : map_bytes)
        usage->map_mib += bytes / (1024 * 1024);
    for (fs::directory_iterator it(proc + "/task", ec), end; !ec && it != end; it.increment(ec)) {
        std::ifstream schedstat(it->path() / "schedstat");
        std::uint64_t on_cpu_ns = 0;
        if (schedstat >> on_cpu_ns)
            usage->cpu_ns += on_cpu_ns;
    }
    return usage;
}

} // namespace tpbench
