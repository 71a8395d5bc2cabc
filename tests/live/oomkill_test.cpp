// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// oomkill against real OOM kills, each inside a memory cgroup of its own with a small limit and
// no swap, so the kernel's choice is confined to the test's children: the tool must report
// exactly the process the kernel killed, once, with the task that ran the OOM killer.
#include "cgroup_scope.hpp"
#include "live.hpp"
#include "tool_run.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::MemoryCgroup;
using tpkit::live::ToolRun;

namespace {

constexpr std::size_t MiB = 1u << 20;
constexpr std::size_t limit = 16 * MiB;

// What a child may do, async-signal-safe only: it is forked from the test.
void name_self(const char* comm) { prctl(PR_SET_NAME, comm); }

void set_oom_score_adj(int adj)
{
    char text[16];
    int len = snprintf(text, sizeof(text), "%d", adj);
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, len) != len)
        _exit(10);
    close(fd);
}

// Writes every page of `bytes` of fresh anonymous memory, so each is charged to the cgroup.
void touch_memory(std::size_t bytes)
{
    auto* p = static_cast<volatile char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
    if (p == MAP_FAILED)
        _exit(11);
    for (std::size_t i = 0; i < bytes; i += 4096)
        p[i] = 1;
}

void wait_byte(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        _exit(12);
}

void send_byte(int fd)
{
    if (write(fd, "x", 1) != 1)
        _exit(13);
}

// A forked child running `body(from_test, to_test)`: two pipes for handshakes. Killed and
// reaped at the end of the scope unless the test reaped it.
class Child {
public:
    explicit Child(const std::function<void(int from_test, int to_test)>& body)
    {
        int down[2], up[2];
        if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        pid_ = fork();
        if (pid_ < 0)
            throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            close(down[1]);
            close(up[0]);
            body(down[0], up[1]);
            _exit(0);
        }
        close(down[0]);
        close(up[1]);
        to_child_ = down[1];
        from_child_ = up[0];
    }
    ~Child()
    {
        if (pid_ > 0 && !status_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        close(to_child_);
        close(from_child_);
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const { return pid_; }
    void go() const { send_byte(to_child_); }
    // What the child wrote: a byte or an int, after its handshake.
    bool read_from(void* data, std::size_t size) const
    {
        return read(from_child_, data, size) == static_cast<ssize_t>(size);
    }

    // The wait status, or nullopt when the child has not ended within `timeout`.
    std::optional<int> wait(std::chrono::milliseconds timeout)
    {
        auto deadline = std::chrono::steady_clock::now() + tpkit::live::patient(timeout);
        while (!status_) {
            int status = 0;
            if (waitpid(pid_, &status, WNOHANG) == pid_)
                status_ = status;
            else if (std::chrono::steady_clock::now() > deadline)
                break;
            else
                std::this_thread::sleep_for(5ms);
        }
        return status_;
    }

private:
    pid_t pid_ = -1;
    int to_child_ = -1;
    int from_child_ = -1;
    std::optional<int> status_;
};

bool killed_by_sigkill(std::optional<int> status)
{
    return status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL;
}

// oomkill --json, attached (its record and task programs).
std::unique_ptr<ToolRun> start_oomkill()
{
    constexpr std::size_t links = 2;
    return tpkit::live::attached_json_tool("oomkill", {}, links);
}

// The victims' oom_score_adj: any, and the most (the first chosen).
constexpr int victim_oom_score_adj = 500;
constexpr int hog_oom_score_adj = 1000;
// What they allocate: the victim up to four times the limit (it is killed on the way), the hog
// five eighths of it, the allocator half of it.
constexpr std::size_t victim_bytes = 4 * limit;
constexpr std::size_t hog_bytes = limit * 5 / 8;
constexpr std::size_t allocator_bytes = limit / 2;

// What the tool printed, for failure messages.
std::string output_of(const ToolRun& tool)
{
    std::string text;
    for (const auto& line : tool.lines())
        text += line + "\n";
    return text + tool.stderr_text();
}

// The events of the tool's output whose victim is process `pid`.
std::vector<std::map<std::string, std::string>> kills_of_in(const ToolRun& tool, pid_t pid)
{
    std::vector<std::map<std::string, std::string>> kills;
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (e["killed_pid"] == std::to_string(pid))
            kills.push_back(e);
    }
    return kills;
}

// The tool's events whose victim is process `pid`, after waiting for the first of them and
// stopping the tool.
std::vector<std::map<std::string, std::string>> kills_of(ToolRun& tool, pid_t pid)
{
    std::string wanted = std::to_string(pid);
    tool.wait_for_line(
        [&](const std::string& l) { return tpkit::live::parse_flat_json(l)["killed_pid"] == wanted; },
        tpkit::live::patient(10s));
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    return kills_of_in(tool, pid);
}

// The figures of the kernel's record: all there, or all null on a kernel whose mark_victim has
// only the pid. The victim's memory is known from below: it mapped `mapped` bytes and wrote at
// least `touched` of them (all resident: no swap); its RSS also counts pages still shared with
// the test process since the fork, so there is no upper bound to check.
void expect_figures(std::map<std::string, std::string>& e, int oom_score_adj, std::size_t mapped,
                    std::size_t touched)
{
    const char* figures[] = {"killed_uid", "total_vm_kb", "anon_rss_kb", "file_rss_kb",
                             "shmem_rss_kb", "pgtables_kb", "oom_score_adj"};
    if (e["total_vm_kb"] == "null") {
        for (const char* key : figures)
            EXPECT_EQ(e[key], "null") << key;
        return;
    }
    EXPECT_EQ(e["killed_uid"], std::to_string(getuid()));
    EXPECT_EQ(e["oom_score_adj"], std::to_string(oom_score_adj));
    EXPECT_GE(std::stoul(e["total_vm_kb"]), mapped / 1024);
    EXPECT_GE(std::stoul(e["anon_rss_kb"]), touched / 1024);
    EXPECT_GT(std::stoul(e["pgtables_kb"]), 0u);
}

} // namespace

TEST(OomkillExact, ReportsTheChildKilledInItsCgroup)
{
    TPKIT_REQUIRE_LIVE();
    TPKIT_REQUIRE_MEMORY_CGROUP();
    MemoryCgroup cgroup("oomkill", limit);
    auto tool = start_oomkill();

    Child victim([](int from_test, int) {
        name_self("tpk-oom-victim");
        set_oom_score_adj(victim_oom_score_adj);
        wait_byte(from_test);
        touch_memory(victim_bytes);
    });
    cgroup.add(victim.pid());
    victim.go();
    ASSERT_TRUE(killed_by_sigkill(victim.wait(60s))) << "the child was not OOM-killed";

    auto kills = kills_of(*tool, victim.pid());
    ASSERT_EQ(kills.size(), 1u) << output_of(*tool);
    auto& e = kills[0];
    std::string pid = std::to_string(victim.pid());
    EXPECT_EQ(e["killed_tid"], pid);
    EXPECT_EQ(e["killed_comm"], "tpk-oom-victim");
    // It ran the OOM killer itself: its own charge went over the limit.
    EXPECT_EQ(e["trigger_pid"], pid);
    EXPECT_EQ(e["trigger_tid"], pid);
    EXPECT_EQ(e["trigger_comm"], "tpk-oom-victim");
    // It mapped victim_bytes and was killed having written about the limit's worth (less what
    // the cgroup's kernel memory took).
    expect_figures(e, victim_oom_score_adj, victim_bytes, limit / 2);
}

TEST(OomkillExact, NamesTheTaskThatRanTheOomKiller)
{
    TPKIT_REQUIRE_LIVE();
    TPKIT_REQUIRE_MEMORY_CGROUP();
    MemoryCgroup cgroup("oomkill", limit);
    auto tool = start_oomkill();

    // The hog holds hog_bytes and offers itself as the victim (hog_oom_score_adj); the allocator
    // then asks for allocator_bytes: its charge runs the OOM killer, which kills the hog, after
    // which the allocator's charge succeeds, with room to spare, and it exits normally.
    static_assert(hog_bytes + allocator_bytes > limit && allocator_bytes < limit);
    Child hog([](int from_test, int to_test) {
        name_self("tpk-oom-hog");
        set_oom_score_adj(hog_oom_score_adj);
        wait_byte(from_test); // in the cgroup, where its memory must be charged
        touch_memory(hog_bytes);
        send_byte(to_test);
        pause();
    });
    cgroup.add(hog.pid());
    hog.go();
    char ready;
    ASSERT_TRUE(hog.read_from(&ready, 1)) << "the hog did not start";
    Child allocator([](int from_test, int) {
        name_self("tpk-oom-alloc");
        set_oom_score_adj(0); // whatever the test runs with: the hog must be the one chosen
        wait_byte(from_test);
        touch_memory(allocator_bytes);
    });
    cgroup.add(allocator.pid());
    allocator.go();
    std::optional<int> allocator_status = allocator.wait(60s);
    ASSERT_TRUE(allocator_status) << "the allocator did not finish";
    ASSERT_TRUE(killed_by_sigkill(hog.wait(60s))) << "the hog was not OOM-killed";

    auto kills = kills_of(*tool, hog.pid());
    ASSERT_EQ(kills.size(), 1u) << output_of(*tool);
    auto& e = kills[0];
    EXPECT_EQ(e["killed_tid"], std::to_string(hog.pid()));
    EXPECT_EQ(e["killed_comm"], "tpk-oom-hog");
    EXPECT_EQ(e["trigger_pid"], std::to_string(allocator.pid()));
    EXPECT_EQ(e["trigger_tid"], std::to_string(allocator.pid()));
    EXPECT_EQ(e["trigger_comm"], "tpk-oom-alloc");
    expect_figures(e, hog_oom_score_adj, hog_bytes, hog_bytes);
    // Usually the allocator then gets its memory and exits. When its charge is retried before
    // the hog's memory is freed, the OOM killer runs again and kills it too: then the tool must
    // say so, once.
    std::size_t allocator_kills = kills_of_in(*tool, allocator.pid()).size();
    if (WIFEXITED(*allocator_status))
        EXPECT_EQ(WEXITSTATUS(*allocator_status), 0);
    else
        EXPECT_TRUE(killed_by_sigkill(allocator_status)) << "wait status " << *allocator_status;
    EXPECT_EQ(allocator_kills, killed_by_sigkill(allocator_status) ? 1u : 0u) << output_of(*tool);
}

namespace {

struct ThreadArgs {
    int from_test;
    int to_test;
};

// The thread left when its process's leader has exited: it allocates until the kernel kills it.
void* allocating_thread(void* p)
{
    auto* args = static_cast<ThreadArgs*>(p);
    name_self("tpk-oom-thread");
    pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
    if (write(args->to_test, &tid, sizeof(tid)) != sizeof(tid))
        _exit(14);
    wait_byte(args->from_test);
    touch_memory(victim_bytes);
    return nullptr;
}

// Whether /proc says the task is a zombie (its leader has exited, the group lives on).
bool is_zombie(pid_t pid, pid_t tid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::size_t paren = text.rfind(')');
    return paren != std::string::npos && text.size() > paren + 2 && text[paren + 2] == 'Z';
}

} // namespace

TEST(OomkillExact, KilledProcessIsTheThreadGroupWhenItsLeaderHasExited)
{
    TPKIT_REQUIRE_LIVE();
    TPKIT_REQUIRE_MEMORY_CGROUP();
    MemoryCgroup cgroup("oomkill", limit);
    auto tool = start_oomkill();

    // The kernel marks the thread that still holds the memory, not the exited leader: the
    // record's pid is that thread's id, the process is its thread group.
    Child process([](int from_test, int to_test) {
        name_self("tpk-oom-leader");
        // Not before the test has moved it: a leader that exits first stays behind in its old
        // cgroup, and a memory cgroup holding no leader has no process the OOM killer can pick.
        wait_byte(from_test);
        static ThreadArgs args;
        args = {from_test, to_test};
        pthread_t thread;
        if (pthread_create(&thread, nullptr, allocating_thread, &args) != 0)
            _exit(15);
        syscall(SYS_exit, 0); // the leader alone
    });
    cgroup.add(process.pid());
    process.go();
    pid_t thread = 0;
    ASSERT_TRUE(process.read_from(&thread, sizeof(thread))) << "no thread";
    auto deadline = std::chrono::steady_clock::now() + tpkit::live::patient(10s);
    while (!is_zombie(process.pid(), process.pid()) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    ASSERT_TRUE(is_zombie(process.pid(), process.pid())) << "the leader did not exit";
    process.go();
    ASSERT_TRUE(killed_by_sigkill(process.wait(60s))) << "the process was not OOM-killed";

    auto kills = kills_of(*tool, process.pid());
    ASSERT_EQ(kills.size(), 1u) << output_of(*tool);
    auto& e = kills[0];
    EXPECT_EQ(e["killed_tid"], std::to_string(thread));
    EXPECT_EQ(e["killed_comm"], "tpk-oom-thread");
    EXPECT_EQ(e["trigger_pid"], std::to_string(process.pid()));
    EXPECT_EQ(e["trigger_tid"], std::to_string(thread));
    EXPECT_EQ(e["trigger_comm"], "tpk-oom-thread");
}
