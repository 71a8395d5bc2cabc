// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tool_run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bpf/bpf.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

namespace tpkit::live {
namespace {

void write_all(int fd, const void* data, std::size_t size)
{
    const char* p = static_cast<const char*>(data);
    while (size) {
        ssize_t n = ::write(fd, p, size);
        if (n <= 0)
            _exit(97);
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

void* report_tid(void* fd)
{
    pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
    write_all(*static_cast<int*>(fd), &tid, sizeof(tid));
    return nullptr;
}

} // namespace

std::string tool_path(const std::string& name)
{
    const char* dir = std::getenv("TPKIT_BIN_DIR");
    return std::string(dir && *dir ? dir : TPKIT_BIN_DIR) + "/" + name;
}

std::chrono::milliseconds patient(std::chrono::milliseconds timeout)
{
    static const long factor = [] {
        const char* text = std::getenv("TPKIT_TEST_SLOWDOWN");
        long n = text ? std::strtol(text, nullptr, 10) : 1;
        return n > 0 ? n : 1;
    }();
    return timeout * factor;
}

namespace {

// The descriptor on which a tool run by ToolRun says "ready" (--ready-fd).
constexpr int ready_descriptor = 3;

// Whether PROGRAM is one of the build's tools that trace (they all take --ready-fd).
bool takes_ready_fd(const std::string& program)
{
    const std::string dir = tool_path("");
    if (!program.starts_with(dir))
        return false;
    const std::string name = program.substr(dir.size());
    return name != "tplist" && name != "tpgen" && name != "tpkit-exporter" && name != "tpkit";
}

} // namespace

ToolRun::ToolRun(const std::vector<std::string>& given_argv, std::optional<std::string> as_user)
{
    // A tool that traces is told to say when it has begun (as a script would use it), unless the
    // test gives --ready-fd itself: its links exist a moment before it counts (the engines arm
    // their programs after attaching).
    std::vector<std::string> argv = given_argv;
    const bool told_ready = !argv.empty() && takes_ready_fd(argv[0]) &&
                            std::find(argv.begin(), argv.end(), "--ready-fd") == argv.end();
    if (told_ready)
        argv.insert(argv.begin() + 1, {"--ready-fd", std::to_string(ready_descriptor)});
    int out[2], err[2], ready[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    struct passwd* pw = as_user ? getpwnam(as_user->c_str()) : nullptr;
    if (as_user && !pw)
        throw std::runtime_error("no user " + *as_user);
    pid_ = fork();
    if (pid_ < 0)
        throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        // Only then: a tool's descriptors are otherwise what the test runner gave (RLIMIT_NOFILE
        // cases count them).
        if (told_ready && ready[1] == ready_descriptor)
            fcntl(ready_descriptor, F_SETFD, 0); // dup2 would keep its close-on-exec
        else if (told_ready)
            dup2(ready[1], ready_descriptor);
        // The test runner may block these; the tool must see them as a user's shell would.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        if (pw && (setgroups(0, nullptr) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0))
            _exit(98);
        std::vector<char*> args;
        for (const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(99);
    }
    close(out[1]);
    close(err[1]);
    close(ready[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
    if (told_ready)
        ready_fd_ = ready[0];
    else
        close(ready[0]);
}

ToolRun::~ToolRun()
{
    if (pid_ > 0 && !try_reap(false)) {
        kill(pid_, SIGKILL);
        try_reap(true);
    }
    if (out_fd_ >= 0)
        close(out_fd_);
    if (err_fd_ >= 0)
        close(err_fd_);
    if (ready_fd_ >= 0)
        close(ready_fd_);
}

bool ToolRun::read_some(std::chrono::milliseconds timeout)
{
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, static_cast<int>(timeout.count()));
    if (n <= 0)
        return false;
    bool open = false;
    char buf[65536];
    if (fds[0].revents) {
        ssize_t r = ::read(out_fd_, buf, sizeof(buf));
        if (r > 0) {
            open = true;
            partial_.append(buf, static_cast<std::size_t>(r));
            std::size_t nl;
            while ((nl = partial_.find('\n')) != std::string::npos) {
                lines_.push_back(partial_.substr(0, nl));
                partial_.erase(0, nl + 1);
            }
        } else {
            fds[0].fd = -1;
        }
    }
    if (fds[1].revents) {
        ssize_t r = ::read(err_fd_, buf, sizeof(buf));
        if (r > 0) {
            open = true;
            stderr_.append(buf, static_cast<std::size_t>(r));
        }
    }
    return open;
}

bool ToolRun::wait_for_line(const std::function<bool(const std::string&)>& pred,
                            std::chrono::milliseconds timeout)
{
    auto deadline = std::chrono::steady_clock::now() + patient(timeout);
    for (;;) {
        for (; scanned_ < lines_.size(); scanned_++)
            if (pred(lines_[scanned_])) {
                scanned_++;
                return true;
            }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return false;
        if (!read_some(left) && try_reap(false)) {
            drain();
            for (; scanned_ < lines_.size(); scanned_++)
                if (pred(lines_[scanned_])) {
                    scanned_++;
                    return true;
                }
            return false; // exited early; the caller shows its stderr
        }
    }
}

void ToolRun::drain()
{
    // Both pipes reach EOF once the tool has exited.
    for (int fd : {out_fd_, err_fd_}) {
        char buf[65536];
        pollfd pfd{fd, POLLIN, 0};
        while (::poll(&pfd, 1, 10000) > 0) {
            ssize_t r = ::read(fd, buf, sizeof(buf));
            if (r <= 0)
                break;
            (fd == out_fd_ ? partial_ : stderr_).append(buf, static_cast<std::size_t>(r));
        }
    }
    std::size_t nl;
    while ((nl = partial_.find('\n')) != std::string::npos) {
        lines_.push_back(partial_.substr(0, nl));
        partial_.erase(0, nl + 1);
    }
    if (!partial_.empty()) {
        ended_mid_line_ = true;
        lines_.push_back(std::exchange(partial_, {}));
    }
}

bool ToolRun::try_reap(bool block)
{
    if (status_)
        return true;
    int status = 0;
    if (waitpid(pid_, &status, block ? 0 : WNOHANG) != pid_)
        return false;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
}

int ToolRun::stop(int sig)
{
    if (!try_reap(false))
        kill(pid_, sig);
    // Reading on while it finishes: its last output may be more than a pipe holds. A tool that
    // does not end on its signal is a failure of the test, not a hang of the whole suite.
    const auto deadline = std::chrono::steady_clock::now() + patient(std::chrono::seconds(20));
    while (!try_reap(false)) {
        if (std::chrono::steady_clock::now() > deadline) {
            ADD_FAILURE() << "pid " << pid_ << " did not exit within 20 s of signal " << sig << ": killed";
            kill(pid_, SIGKILL);
            try_reap(true);
            break;
        }
        read_some(std::chrono::milliseconds(20));
    }
    drain();
    return *status_;
}

int ToolRun::wait(std::chrono::milliseconds timeout)
{
    auto deadline = std::chrono::steady_clock::now() + patient(timeout);
    while (!try_reap(false)) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid_, SIGKILL);
            break;
        }
        read_some(std::chrono::milliseconds(20));
    }
    try_reap(true);
    drain();
    return *status_;
}

bool ToolRun::wait_until_ready(std::chrono::steady_clock::time_point deadline)
{
    std::string said;
    while (said.find('\n') == std::string::npos) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd fd{ready_fd_, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&fd, 1, static_cast<int>(left.count())) <= 0)
            return false;
        char buf[64];
        const ssize_t n = ::read(ready_fd_, buf, sizeof(buf));
        if (n <= 0)
            return false; // the tool ended without being ready
        said.append(buf, static_cast<std::size_t>(n));
    }
    close(ready_fd_);
    ready_fd_ = -1;
    return said == "ready\n";
}

bool ToolRun::wait_until_attached(std::size_t links, std::chrono::milliseconds timeout)
{
    const std::string dir = "/proc/" + std::to_string(pid_) + "/fd";
    auto deadline = std::chrono::steady_clock::now() + patient(timeout);
    if (ready_fd_ >= 0 && !wait_until_ready(deadline))
        return false;
    while (std::chrono::steady_clock::now() < deadline && !try_reap(false)) {
        std::size_t found = 0;
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
            std::error_code link_ec;
            if (std::filesystem::read_symlink(entry.path(), link_ec).string() == "anon_inode:bpf_link")
                found++;
        }
        if (found >= links)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

bool ToolRun::wait_until_unprivileged(std::chrono::milliseconds timeout)
{
    const std::string status_path = "/proc/" + std::to_string(pid_) + "/status";
    auto deadline = std::chrono::steady_clock::now() + patient(timeout);
    while (std::chrono::steady_clock::now() < deadline && !try_reap(false)) {
        std::ifstream status(status_path);
        int empty = 0;
        for (std::string line; std::getline(status, line);)
            if (line.starts_with("CapEff:") || line.starts_with("CapBnd:"))
                empty += std::stoull(line.substr(line.find(':') + 1), nullptr, 16) == 0;
        if (empty == 2)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

void ToolRun::shrink_stdout_pipe()
{
    if (fcntl(out_fd_, F_SETPIPE_SZ, 4096) < 0)
        throw std::runtime_error("F_SETPIPE_SZ failed");
}

int ToolRun::wait_without_reading_stdout(std::chrono::milliseconds timeout)
{
    auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[4096];
    while (!try_reap(false)) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid_, SIGKILL);
            break;
        }
        pollfd pfd{err_fd_, POLLIN, 0};
        if (::poll(&pfd, 1, 20) > 0) {
            ssize_t r = ::read(err_fd_, buf, sizeof(buf));
            if (r > 0)
                stderr_.append(buf, static_cast<std::size_t>(r));
        }
    }
    try_reap(true);
    drain();
    return *status_;
}

ForkBatch run_fork_batch(const std::string& comm, int children, int threads)
{
    int fds[2];
    if (pipe(fds) != 0)
        throw std::runtime_error("pipe failed");
    ForkBatch batch;
    batch.forker = fork();
    if (batch.forker < 0)
        throw std::runtime_error("fork failed");
    if (batch.forker == 0) {
        close(fds[0]);
        prctl(PR_SET_NAME, comm.c_str(), 0, 0, 0);
        for (int i = 0; i < children; i++) {
            pid_t child = fork();
            if (child == 0)
                _exit(0);
            write_all(fds[1], &child, sizeof(child));
            waitpid(child, nullptr, 0);
        }
        for (int i = 0; i < threads; i++) {
            pthread_t t;
            if (pthread_create(&t, nullptr, report_tid, &fds[1]) != 0)
                _exit(96);
            pthread_join(t, nullptr);
        }
        _exit(0);
    }
    close(fds[1]);
    pid_t id;
    int index = 0;
    while (::read(fds[0], &id, sizeof(id)) == sizeof(id))
        (index++ < children ? batch.children : batch.threads).push_back(id);
    close(fds[0]);
    int status = 0;
    waitpid(batch.forker, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("forker failed");
    return batch;
}

pid_t start_child(const char* comm, const std::function<void()>& body)
{
    pid_t pid = fork();
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0) {
        prctl(PR_SET_NAME, comm, 0, 0, 0);
        body();
        _exit(0);
    }
    return pid;
}

int reap(pid_t pid)
{
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        throw std::runtime_error("waitpid failed");
    return status;
}

// nlohmann::json::parse's allow_exceptions: a line that is no JSON gives a discarded value.
constexpr bool json_parse_throws = false;

std::map<std::string, std::string> parse_flat_json(const std::string& line)
{
    std::map<std::string, std::string> out;
    std::size_t start = line.find('{');
    if (start == std::string::npos)
        return out;
    auto object = nlohmann::json::parse(line.begin() + static_cast<std::ptrdiff_t>(start), line.end(),
                                        nullptr, json_parse_throws);
    if (!object.is_object())
        return out;
    for (const auto& [key, value] : object.items())
        out[key] = value.is_string() ? value.get<std::string>()
                                     : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return out;
}

std::map<std::uint64_t, std::uint64_t> histogram_buckets(const std::vector<std::string>& lines,
                                                         const std::optional<std::string>& key)
{
    std::map<std::uint64_t, std::uint64_t> counts;
    for (const auto& line : lines) {
        auto object = nlohmann::json::parse(line, nullptr, json_parse_throws);
        if (!object.is_object() || !object.contains("buckets"))
            continue;
        if (key && object.value("key", std::string()) != *key)
            continue;
        for (const auto& bucket : object["buckets"])
            if (auto count = bucket.at("count").get<std::uint64_t>())
                counts[bucket.at("low").get<std::uint64_t>()] += count;
    }
    return counts;
}

std::map<std::string, std::uint64_t> histogram_totals(const std::vector<std::string>& lines)
{
    std::map<std::string, std::uint64_t> totals;
    for (const auto& line : lines) {
        auto object = nlohmann::json::parse(line, nullptr, json_parse_throws);
        if (!object.is_object() || !object.contains("buckets"))
            continue;
        std::uint64_t& total = totals[object.value("key", std::string())];
        for (const auto& bucket : object["buckets"])
            total += bucket.at("count").get<std::uint64_t>();
    }
    return totals;
}

namespace {

// Program ID as loaded now, with its name; nothing when no such program is loaded.
std::optional<HeldProgram> loaded_program(std::uint32_t id)
{
    int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0)
        return std::nullopt;
    bpf_prog_info info{};
    std::uint32_t len = sizeof(info);
    std::optional<HeldProgram> program;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
        program = HeldProgram{id, info.name};
    close(fd);
    return program;
}

} // namespace

std::vector<HeldProgram> programs_held_by(pid_t pid)
{
    // Program and link descriptors both say "prog_id:" in fdinfo.
    std::set<std::uint32_t> ids;
    std::error_code ec;
    for (const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fdinfo", ec)) {
        std::ifstream in(entry.path());
        std::string key;
        std::uint32_t id = 0;
        while (in >> key) {
            if (key == "prog_id:" && in >> id)
                ids.insert(id);
        }
    }
    std::vector<HeldProgram> held;
    for (std::uint32_t id : ids)
        if (auto program = loaded_program(id))
            held.push_back(*program);
    return held;
}

std::set<std::uint32_t> loaded_program_ids()
{
    std::set<std::uint32_t> ids;
    for (std::uint32_t id = 0; bpf_prog_get_next_id(id, &id) == 0;)
        ids.insert(id);
    return ids;
}

namespace {

// Of `ids`, those no process holds open now.
std::set<std::uint32_t> unheld(std::set<std::uint32_t> ids)
{
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string pid = entry.path().filename().string();
        if (ids.empty())
            break;
        if (pid.find_first_not_of("0123456789") != std::string::npos)
            continue;
        for (const HeldProgram& held : programs_held_by(std::stoi(pid)))
            ids.erase(held.id);
    }
    return ids;
}

} // namespace

std::vector<HeldProgram> programs_left_behind(const std::set<std::uint32_t>& before,
                                              std::chrono::milliseconds timeout)
{
    auto deadline = std::chrono::steady_clock::now() + patient(timeout);
    std::set<std::uint32_t> left;
    for (;;) {
        std::set<std::uint32_t> added;
        for (std::uint32_t id : loaded_program_ids())
            if (!before.count(id))
                added.insert(id);
        left = unheld(std::move(added));
        if (left.empty() || std::chrono::steady_clock::now() > deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::vector<HeldProgram> programs;
    for (std::uint32_t id : left)
        if (auto program = loaded_program(id)) // else gone meanwhile
            programs.push_back(*program);
    return programs;
}

void expect_none_left_behind(const std::set<std::uint32_t>& before, const std::string& what)
{
    for (const HeldProgram& p : programs_left_behind(before, std::chrono::seconds(3)))
        ADD_FAILURE() << what << (what.empty() ? "" : ": ") << "left loaded: program " << p.id << " " << p.name;
}

bool wait_until_programs_unloaded(const std::vector<HeldProgram>& programs,
                                  std::chrono::milliseconds timeout)
{
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        bool any = false;
        for (const auto& p : programs) {
            int fd = bpf_prog_get_fd_by_id(p.id);
            if (fd >= 0) {
                close(fd);
                any = true;
            } else if (errno != ENOENT) {
                any = true; // cannot tell: keep asking
            }
        }
        if (!any)
            return true;
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

std::string json_object_problem(const std::string& text)
{
    // nlohmann's parser is strict RFC 8259 (UTF-8 included) but keeps the last of duplicate
    // names: the callback sees every name, one set per open object.
    std::vector<std::set<std::string>> names;
    std::string duplicate;
    auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event == nlohmann::json::parse_event_t::object_start)
            names.emplace_back();
        else if (event == nlohmann::json::parse_event_t::object_end)
            names.pop_back();
        else if (event == nlohmann::json::parse_event_t::key && !names.back().insert(parsed.get<std::string>()).second &&
                 duplicate.empty())
            duplicate = parsed.get<std::string>();
        return true;
    };
    try {
        auto value = nlohmann::json::parse(text, callback);
        if (!value.is_object())
            return "not an object but a JSON " + std::string(value.type_name());
    } catch (const nlohmann::json::parse_error& e) {
        return e.what();
    }
    if (!duplicate.empty())
        return "duplicate member name \"" + duplicate + "\"";
    return {};
}

bool poke_until_line(ToolRun& tool, const std::function<void()>& poke,
                     const std::function<bool(const std::string&)>& pred, int attempts,
                     std::chrono::milliseconds each)
{
    for (int attempt = 0; attempt < attempts; attempt++) {
        poke();
        if (tool.wait_for_line(pred, each))
            return true;
    }
    return false;
}

std::vector<std::map<std::string, std::string>> own_events(const std::string& name,
                                                           std::vector<std::string> args,
                                                           bool include_self)
{
    args.insert(args.begin(), {tool_path(name), "--json"});
    if (include_self)
        args.push_back("--include-self");
    ToolRun tool(args);
    if (!tool.wait_until_unprivileged(std::chrono::seconds(20)))
        return {{{"error", name + " did not drop its capabilities: " + tool.stderr_text()}}};
    if (int status = tool.stop(SIGINT); status != 0)
        return {{{"error", name + " exited " + std::to_string(status) + ": " + tool.stderr_text()}}};
    std::vector<std::map<std::string, std::string>> own;
    for (const auto& line : tool.lines()) {
        auto e = parse_flat_json(line);
        if (e["pid"] == std::to_string(tool.pid()))
            own.push_back(std::move(e));
    }
    return own;
}

std::unique_ptr<ToolRun> attached_json_tool(const std::string& name, std::vector<std::string> options,
                                            std::size_t links)
{
    options.insert(options.begin(), {tool_path(name), "--json"});
    auto tool = std::make_unique<ToolRun>(options);
    if (!tool->wait_until_attached(links, std::chrono::seconds(20)))
        ADD_FAILURE() << name << " did not attach: " << tool->stderr_text();
    return tool;
}

} // namespace tpkit::live
