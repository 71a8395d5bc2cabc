// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "cgroup_scope.hpp"

#include "tool_run.hpp"

#include "tpkit/run/stream.hpp"

#include <fcntl.h>
#include <mntent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;

namespace tpkit::live {
namespace {

std::string read_text(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_text(const std::string& path, const std::string& value)
{
    std::ofstream out(path);
    out << value;
    out.flush();
    if (!out)
        throw std::runtime_error("cannot write " + value + " into " + path + ": " +
                                 std::strerror(errno));
}

bool has_word(const std::string& text, const std::string& word)
{
    std::istringstream words(text);
    for (std::string w; words >> w;)
        if (w == word)
            return true;
    return false;
}

// Where the cgroup v1 memory hierarchy is mounted, "" when nowhere.
std::string memory_v1_mount()
{
    std::string where;
    if (FILE* mounts = setmntent("/proc/self/mounts", "r")) {
        while (mntent* m = getmntent(mounts))
            if (std::strcmp(m->mnt_type, "cgroup") == 0 && hasmntopt(m, "memory")) {
                where = m->mnt_dir;
                break;
            }
        endmntent(mounts);
    }
    return where;
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

} // namespace

namespace {

// The cgroup2 mount when it has the memory controller, "" when not.
std::string memory_v2_root()
{
    std::string v2_root = tpkit::cgroup2_mount();
    if (!v2_root.empty() && has_word(read_text(v2_root + "/cgroup.controllers"), "memory"))
        return v2_root;
    return "";
}

} // namespace

std::string MemoryCgroup::unavailable_reason()
{
    if (!memory_v2_root().empty() || !memory_v1_mount().empty())
        return "";
    std::string v2_root = tpkit::cgroup2_mount();
    return "no memory controller: neither on the cgroup2 mount (" +
           (v2_root.empty() ? "none" : v2_root) + ") nor on a cgroup v1 hierarchy";
}

MemoryCgroup::MemoryCgroup(const std::string& name, std::uint64_t limit_bytes)
{
    std::string leaf = "tpkit-" + name + "-" + std::to_string(getpid());
    std::string v2_root = memory_v2_root();
    if (!v2_root.empty()) {
        v2_ = true;
        parent_ = v2_root;
        if (!has_word(read_text(parent_ + "/cgroup.subtree_control"), "memory")) {
            write_text(parent_ + "/cgroup.subtree_control", "+memory");
            enabled_memory_ = true;
        }
    } else {
        parent_ = memory_v1_mount();
        if (parent_.empty())
            throw std::runtime_error(unavailable_reason());
    }
    path_ = parent_ + "/" + leaf;
    if (mkdir(path_.c_str(), 0755) != 0) {
        std::string why = std::strerror(errno);
        if (enabled_memory_)
            write_text(parent_ + "/cgroup.subtree_control", "-memory");
        throw std::runtime_error("cannot make " + path_ + ": " + why);
    }
    // A throwing constructor runs no destructor: clean up here.
    try {
        std::string limit = std::to_string(limit_bytes);
        if (v2_) {
            write("memory.max", limit);
            if (exists(path_ + "/memory.swap.max")) // absent without swap accounting
                write("memory.swap.max", "0");
        } else {
            write("memory.limit_in_bytes", limit);
            if (exists(path_ + "/memory.memsw.limit_in_bytes"))
                write("memory.memsw.limit_in_bytes", limit);
        }
    } catch (...) {
        remove();
        throw;
    }
}

MemoryCgroup::~MemoryCgroup() { remove(); }

void MemoryCgroup::remove() noexcept
{
    // Whatever a failed test left inside; its parent reaps it (exit removes it from the cgroup).
    auto deadline = std::chrono::steady_clock::now() + patient(10s);
    while (rmdir(path_.c_str()) != 0 && errno == EBUSY &&
           std::chrono::steady_clock::now() < deadline) {
        std::istringstream procs(read_text(path_ + "/cgroup.procs"));
        for (pid_t pid; procs >> pid;)
            kill(pid, SIGKILL);
        std::this_thread::sleep_for(10ms);
    }
    if (enabled_memory_) {
        try {
            write_text(parent_ + "/cgroup.subtree_control", "-memory");
        } catch (const std::exception&) {
            // Another cgroup may need the controller now; leaving it enabled harms nothing.
        }
    }
}

void MemoryCgroup::add(pid_t pid) const { write("cgroup.procs", std::to_string(pid)); }

void MemoryCgroup::write(const std::string& file, const std::string& value) const
{
    write_text(path_ + "/" + file, value);
}

pid_t run_memory_pressure(const std::string& comm)
{
    constexpr std::size_t limit = 16u << 20;
    MemoryCgroup cgroup("pressure", limit);
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    pid_t child = fork();
    if (child < 0)
        throw std::runtime_error("fork failed");
    if (child == 0) {
        // Async-signal-safe only: forked from the test.
        prctl(PR_SET_NAME, comm.c_str());
        char c;
        if (read(go[0], &c, 1) != 1) // moved into the cgroup
            _exit(2);
        auto touch = [](std::size_t bytes) {
            void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (p == MAP_FAILED)
                _exit(3);
            for (std::size_t i = 0; i < bytes; i += 4096)
                static_cast<volatile char*>(p)[i] = 1;
            return p;
        };
        if (madvise(touch(limit / 2), limit / 2, MADV_FREE) != 0)
            _exit(4);
        touch(4 * limit);
        _exit(0);
    }
    close(go[0]);
    int status = 0;
    try {
        cgroup.add(child);
        if (write(go[1], "x", 1) != 1)
            throw std::runtime_error("cannot start the memory pressure child");
    } catch (...) {
        kill(child, SIGKILL);
        waitpid(child, nullptr, 0);
        close(go[1]);
        throw;
    }
    close(go[1]);
    waitpid(child, &status, 0); // bounded: the child maps four times the limit, no more
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        throw std::runtime_error("the memory pressure child was not OOM-killed (wait status " +
                                 std::to_string(status) + ")");
    return child;
}

} // namespace tpkit::live
