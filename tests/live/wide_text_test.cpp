// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpsnoop's text against the kernel's, wide: every event of many subsystems that one workload
// fires (files, mmap, locks, signals, timers, fork, pipes, TCP and UDP over IPv4 and IPv6 on
// loopback, direct reads of a loop device) is traced by tpsnoop and by a private trace instance,
// both for the workload's comm only, and each event kind's lines must be the same multiset of
// text. Left aside, as tpsnoop(8) lists them: %p pointers, which the kernel hashes (its trace option
// hash-ptr stays on: on 6.1, with it off, the kernel printed every %s of the trace empty), and
// what the kernel computes when its trace is read rather than at the event (writeback's age=), or
// reads from a clock or the task as each record is built (timer_start's timeout=, an exiting
// task's prev_state), or prints from bytes it
// left unset (6.1's fib_table_lookup gateway, neigh_create primary_key6).
// An event may be missing from tpsnoop's lines when the kernel skipped its BPF program because
// another ran on the CPU (DESIGN.md): an event in an interrupt that came during a program's run,
// or one fired in the task as a run ends (a wakeup of ksoftirqd, under load). So every line
// tpsnoop prints must be one the kernel printed, and the kernel's lines outside interrupts that
// tpsnoop lacks no more than the runs it said were skipped (6.1 counts none). A suite ending in Exact:
// it runs in the kernel VMs too.
#include "live.hpp"
#include "loop_device.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include <tpkit/kernel/tracefs.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr const char* workload_comm = "tpkit-wide";

// Subsystems whose events the workload fires, on 6.1 and 6.18 (those a kernel lacks are left out).
const std::vector<std::string> subsystems = {
    "sched", "signal",  "timer",     "task",    "filelock", "mmap",      "maple_tree", "sock",
    "tcp",   "udp",     "net",       "skb",     "fib",      "fib6",      "qdisc",      "block",
    "filemap", "writeback", "pagemap", "rseq",  "percpu",   "tlb",       "mmap_lock",  "rcu",
    "neigh", "napi",    "kmem",      "exceptions", "raw_syscalls", "oom", "huge_memory", "vmscan",
};

std::vector<std::string> present_subsystems()
{
    std::vector<std::string> out;
    for (const std::string& s : subsystems)
        if (std::filesystem::is_directory(tpkit::tracefs_root() / "events" / s))
            out.push_back(s);
    return out;
}

// tpsnoop attaches one link per event of these subsystems.
std::size_t event_count(const std::vector<std::string>& systems)
{
    std::size_t n = 0;
    for (const std::string& s : systems)
        for (const auto& e : std::filesystem::directory_iterator(tpkit::tracefs_root() / "events" / s))
            n += std::filesystem::exists(e.path() / "id");
    return n;
}

void tcp_exchange(int family)
{
    int server = socket(family, SOCK_STREAM, 0);
    sockaddr_storage addr{};
    socklen_t len;
    if (family == AF_INET) {
        auto* a = reinterpret_cast<sockaddr_in*>(&addr);
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof(*a);
    } else {
        auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof(*a);
    }
    bind(server, reinterpret_cast<sockaddr*>(&addr), len);
    getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len);
    listen(server, 1);
    int client = socket(family, SOCK_STREAM, 0);
    connect(client, reinterpret_cast<sockaddr*>(&addr), len);
    int accepted = accept(server, nullptr, nullptr);
    char buf[512] = "tpkit";
    write(client, buf, sizeof(buf));
    read(accepted, buf, sizeof(buf));
    write(accepted, buf, 100);
    read(client, buf, sizeof(buf));
    close(client);
    close(accepted);
    close(server);

    int rx = socket(family, SOCK_DGRAM, 0);
    bind(rx, reinterpret_cast<sockaddr*>(&addr), family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    len = sizeof(addr);
    auto* port = family == AF_INET ? &reinterpret_cast<sockaddr_in*>(&addr)->sin_port
                                   : &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port;
    *port = 0;
    bind(rx, reinterpret_cast<sockaddr*>(&addr), len);
    getsockname(rx, reinterpret_cast<sockaddr*>(&addr), &len);
    int tx = socket(family, SOCK_DGRAM, 0);
    for (int i = 0; i < 3; i++)
        sendto(tx, buf, 64 + i, 0, reinterpret_cast<sockaddr*>(&addr), len);
    for (int i = 0; i < 3; i++)
        recv(rx, buf, sizeof(buf), 0);
    close(tx);
    close(rx);
}

void run_workload(const std::string& disk, const std::string& dir)
{
    std::string file = dir + "/data";
    int fd = open(file.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
    std::vector<char> page(16384, 'x');
    write(fd, page.data(), page.size());
    fsync(fd);
    flock(fd, LOCK_EX);
    flock(fd, LOCK_UN);
    struct flock lock{};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_len = 100;
    fcntl(fd, F_SETLK, &lock);
    lock.l_type = F_UNLCK;
    fcntl(fd, F_SETLK, &lock);
    void* mapped = mmap(nullptr, page.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    static_cast<char*>(mapped)[0] = 'y';
    msync(mapped, page.size(), MS_SYNC);
    munmap(mapped, page.size());
    void* anon = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    std::memset(anon, 1, 1 << 20);
    munmap(anon, 1 << 20);
    close(fd);
    rename(file.c_str(), (file + ".2").c_str());
    unlink((file + ".2").c_str());

    signal(SIGUSR1, [](int) {});
    kill(getpid(), SIGUSR1);
    std::this_thread::sleep_for(2ms);

    int pipes[2];
    pipe(pipes);
    pid_t child = fork();
    if (child == 0) {
        write(pipes[1], "ping", 4);
        _exit(0);
    }
    char buf[8];
    read(pipes[0], buf, sizeof(buf));
    waitpid(child, nullptr, 0);
    close(pipes[0]);
    close(pipes[1]);

    tcp_exchange(AF_INET);
    tcp_exchange(AF_INET6);
    tpkit::live::read_direct(disk, {{0, 4096}, {65536, 8192}});
}

// Each line's text after "TIME: ", by event kind ("sched_switch", "sys_exit"), with what is left
// aside masked the same way on both sides.
// IN_TASK: only the kernel's lines of events outside interrupts (tpsnoop's lines have no flags).
std::map<std::string, std::vector<std::string>> by_kind(const std::vector<std::string>& lines,
                                                        bool in_task = false)
{
    // What tpsnoop(8) lists as not the kernel's own: writeback's age=, computed when the kernel's
    // trace is read; timer_start's timeout=, from jiffies read as each of the two records (the
    // kernel's, tpsnoop's) is built, as an exiting task's prev_state is; on 6.1, fields the kernel
    // leaves unset in the record (its text shows whatever its buffer held): fib_table_lookup's
    // gateway without one, neigh_create's primary_key6 of an IPv4 entry.
    static const std::regex age(R"(( age=)\d+)");
    static const std::regex timeout(R"((\[timeout=)-?\d+)");
    static const std::regex unset_gw(R"((gw )[0-9.]+/[0-9a-f:.]+)");
    static const std::regex unset_key6(R"((family 2 .* primary_key6 )[0-9a-f:.]+)");
    // Hashed pointers; (____ptrval____) before the kernel has the randomness to hash them.
    static const std::regex pointer(R"(\b[0-9a-f]{16}\b|\(____ptrval____\))");
    std::map<std::string, std::vector<std::string>> out;
    for (const std::string& line : lines) {
        auto parsed = tpkit::live::parse_trace_line(line);
        if (!parsed || (in_task && parsed->in_interrupt))
            continue;
        std::string text = std::regex_replace(parsed->text, age, "$1AGE");
        if (text.starts_with("fib_table_lookup:"))
            text = std::regex_replace(text, unset_gw, "$1UNSET");
        if (text.starts_with("timer_start:"))
            text = std::regex_replace(text, timeout, "$1TIMEOUT");
        if (text.starts_with("neigh_create:"))
            text = std::regex_replace(text, unset_key6, "$1UNSET");
        text = tpkit::live::without_exit_state(std::regex_replace(text, pointer, "POINTER"));
        std::string kind = text.substr(0, text.find(':'));
        out[kind].push_back(std::move(text));
    }
    for (auto& [kind, texts] : out)
        std::sort(texts.begin(), texts.end());
    return out;
}

// A - B of two sorted multisets.
std::vector<std::string> minus(const std::vector<std::string>& a, const std::vector<std::string>& b)
{
    std::vector<std::string> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

} // namespace

TEST(WideTextExact, EveryEventOfTheWorkloadAsTheKernelPrintsIt)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::LoopDevice disk;
    auto systems = present_subsystems();
    std::string dir = fmt::format("/tmp/tpkit-wide-{}", getpid());
    std::filesystem::create_directories(dir);

    std::vector<std::string> argv{tpkit::live::tool_path("tpsnoop"), "--comm", workload_comm};
    for (const std::string& s : systems)
        argv.push_back(s + ":*");
    ToolRun tool(argv);
    ASSERT_TRUE(tool.wait_until_attached(event_count(systems), 60s)) << tool.stderr_text();

    std::vector<std::string> kernel_lines;
    {
        tpkit::live::TraceInstance instance("wide");
        std::ofstream(instance.dir() / "buffer_size_kb") << 8192 << std::flush;
        for (const std::string& s : systems) {
            ASSERT_EQ(instance.set_filter(s, "", std::string("COMM == \"") + workload_comm + "\""), "") << s;
            instance.enable(s, "", true);
        }
        tpkit::live::FreedTaskWatch freed(workload_comm);
        pid_t workload = tpkit::live::start_child(workload_comm, [&] { run_workload(disk.path(), dir); });
        ASSERT_EQ(tpkit::live::reap(workload), 0);
        // Both traces stay on until the workload's task is gone (FreedTaskWatch), and the
        // kernel's stops first, so that tpsnoop's covers all of it.
        ASSERT_TRUE(freed.wait(workload, tpkit::live::patient(10s))) << "the workload's task was never freed";
        for (const std::string& s : systems)
            instance.enable(s, "", false);
        kernel_lines = instance.take_lines();
    }
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    std::filesystem::remove_all(dir);

    auto kernel = by_kind(kernel_lines);
    auto ours = by_kind(tool.lines());
    constexpr std::size_t fewest_kinds = 40; // of events the workload fires
    ASSERT_GT(kernel.size(), fewest_kinds) << "the workload fired too few kinds of events";
    auto kernel_in_task = by_kind(kernel_lines, true);
    std::size_t identical = 0, with_unseen = 0;
    std::vector<std::string> unseen_in_task; // the kernel's lines outside interrupts tpsnoop lacks
    for (const auto& [kind, texts] : kernel) {
        const auto& mine = ours[kind];
        if (mine == texts) {
            identical++;
            continue;
        }
        auto only_ours = minus(mine, texts);
        if (only_ours.empty()) {
            with_unseen++; // lines tpsnoop did not see, every line tpsnoop printed the kernel's
            auto in_task = minus(kernel_in_task[kind], mine);
            unseen_in_task.insert(unseen_in_task.end(), in_task.begin(), in_task.end());
            continue;
        }
        const auto only_kernel = minus(texts, mine);
        ADD_FAILURE() << kind << ": " << texts.size() << " lines by the kernel, " << mine.size()
                      << " by tpsnoop\n  kernel: " << (only_kernel.empty() ? "" : only_kernel.front())
                      << "\n  tpsnoop: " << only_ours.front();
    }
    for (const auto& [kind, texts] : ours)
        if (!kernel.count(kind))
            ADD_FAILURE() << kind << ": " << texts.size() << " lines by tpsnoop, none by the kernel: "
                          << texts.front();
    // A line missing outside interrupts is one of the runs tpsnoop said the kernel skipped.
    EXPECT_LE(unseen_in_task.size(), tpkit::live::skipped_runs(tool.stderr_text()))
        << "outside interrupts, printed by the kernel only: " << fmt::format("{}", fmt::join(unseen_in_task, "\n  "))
        << "\ntpsnoop's stderr: " << tool.stderr_text();
    std::printf("%zu of %zu event kinds identical, %zu more with lines tpsnoop did not see (%zu outside interrupts)\n",
                identical, kernel.size(), with_unseen, unseen_in_task.size());
}
