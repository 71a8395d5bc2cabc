// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpsnoop's text against the kernel's own: one workload process (a fork, a failing openat, a
// sleep, a refused TCP connect, a direct read of a loop device, kmalloc all along) is traced by
// tpsnoop and by a private trace instance at once, both for the workload's comm only, and each
// event's text after "TIME: " must be the same, byte for byte. The instance has hash-ptr off:
// tpkit shows pointers unhashed, as the kernel does then. The one deliberate difference: where
// the kernel prints sys_openat's filename as an address, tpsnoop prints the string it points to
// (read in BPF): both are left out of the comparison, the rest of the line must still be the
// kernel's, and tpsnoop's strings must be the paths the workload opened.
#include "live.hpp"
#include "loop_device.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string_view>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr const char* workload_comm = "tpkit-kerntext";
constexpr const char* opened_path = "/nonexistent/tpkit-kerntext";

const std::vector<std::pair<std::string, std::string>> compared_events = {
    {"sched", "sched_switch"},         {"sched", "sched_process_exit"},
    {"sched", "sched_process_fork"},   {"sock", "inet_sock_set_state"},
    {"skb", "kfree_skb"},              {"irq", "softirq_entry"},
    {"signal", "signal_generate"},     {"syscalls", "sys_enter_openat"},
    {"syscalls", "sys_exit_openat"},   {"task", "task_newtask"},
    {"block", "block_rq_issue"},       {"kmem", "kmalloc"},
    {"raw_syscalls", "sys_exit"},
};

// A TCP port on 127.0.0.1 that nothing listens on: one the kernel just gave out and took back.
std::uint16_t closed_port()
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
}

constexpr int workload_opens = 3; // of opened_path

void run_workload(const std::string& disk, std::uint16_t port)
{
    // From memory just written: BPF cannot fault in a page the process has not touched yet.
    std::string path = opened_path;
    for (int i = 0; i < workload_opens; i++)
        open(path.c_str(), O_RDONLY);
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, nullptr, 0);
    std::this_thread::sleep_for(20ms);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)); // refused
    close(fd);
    tpkit::live::read_direct(disk, {{0, 4096}, {65536, 8192}});
}

// The text after "TIME: " of each line: the event as its print fmt shows it, with an exiting
// task's prev_state masked (trace_instance.hpp).
// IN_INTERRUPT: only the kernel's lines of events in interrupts (tpsnoop's lines have no flags).
std::vector<std::string> event_texts(const std::vector<std::string>& lines, bool in_interrupt = false)
{
    std::vector<std::string> texts;
    for (const std::string& line : lines) {
        auto parsed = tpkit::live::parse_trace_line(line);
        if (parsed && (!in_interrupt || parsed->in_interrupt))
            texts.push_back(tpkit::live::without_exit_state(parsed->text));
    }
    std::sort(texts.begin(), texts.end());
    return texts;
}

// sys_openat's filename: the kernel prints its address, tpsnoop the string it points to. Both
// are replaced by one placeholder for the comparison; FILENAMES gets what was there.
std::string without_filename(std::string text, std::vector<std::string>* filenames = nullptr)
{
    constexpr std::string_view field = "filename: ";
    std::size_t at = text.find(field);
    if (!text.starts_with("sys_openat(") || at == std::string::npos)
        return text;
    at += field.size();
    std::size_t end = text.find(", flags: ", at);
    if (end == std::string::npos)
        return text;
    if (filenames)
        filenames->push_back(text.substr(at, end - at));
    return text.replace(at, end - at, "FILENAME");
}

// "sched_switch" for "sched_switch: prev_comm=…", "sys_openat" for "sys_openat(…)".
std::string event_of(const std::string& text)
{
    return text.substr(0, std::min(text.find(": "), text.find_first_of("( ")));
}

} // namespace

TEST(TpsnoopLive, TextIsTheKernelsOwnByteForByte)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::LoopDevice disk;
    std::uint16_t port = closed_port();

    std::vector<std::string> argv{tpkit::live::tool_path("tpsnoop"), "--comm", workload_comm};
    for (const auto& [system, event] : compared_events)
        argv.push_back(system + ":" + event);
    ToolRun tool(argv);
    ASSERT_TRUE(tool.wait_until_attached(compared_events.size(), 20s)) << tool.stderr_text();

    std::vector<std::string> kernel_lines;
    {
        tpkit::live::TraceInstance instance("kerntext");
        instance.set_option("hash-ptr", "0");
        for (const auto& [system, event] : compared_events) {
            ASSERT_EQ(instance.set_filter(system, event, std::string("COMM == \"") + workload_comm + "\""), "");
            instance.enable(system, event, true);
        }
        tpkit::live::FreedTaskWatch freed(workload_comm);
        pid_t workload = tpkit::live::start_child(workload_comm, [&] { run_workload(disk.path(), port); });
        ASSERT_EQ(tpkit::live::reap(workload), 0);
        // Both traces stay on until the workload's task is gone (FreedTaskWatch), and the
        // kernel's stops first, so that tpsnoop's covers all of it.
        ASSERT_TRUE(freed.wait(workload, tpkit::live::patient(10s))) << "the workload's task was never freed";
        for (const auto& [system, event] : compared_events)
            instance.enable(system, event, false);
        kernel_lines = instance.take_lines();
    }
    ASSERT_EQ(tool.stop(SIGINT), 0);

    auto kernel = event_texts(kernel_lines);
    auto ours = event_texts(tool.lines());
    auto in_interrupts = event_texts(kernel_lines, true);
    for (auto& text : in_interrupts)
        text = without_filename(text);
    std::sort(in_interrupts.begin(), in_interrupts.end());
    std::vector<std::string> filenames;
    for (auto& text : kernel)
        text = without_filename(text);
    for (auto& text : ours)
        text = without_filename(text, &filenames);
    std::sort(kernel.begin(), kernel.end());
    std::sort(ours.begin(), ours.end());
    // The strings the workload opened, quoted: its opens of opened_path, and the disk's.
    std::string opened = std::string("\"") + opened_path + "\"";
    EXPECT_EQ(std::count(filenames.begin(), filenames.end(), opened), workload_opens);
    for (const auto& f : filenames)
        EXPECT_TRUE(f == opened || f == "\"" + disk.path() + "\"") << f;
    std::map<std::string, int> kernel_events;
    for (const std::string& text : kernel)
        kernel_events[event_of(text)]++;
    for (const char* name : {"sched_switch", "sched_process_exit", "sched_process_fork",
                             "inet_sock_set_state", "kfree_skb", "softirq_entry", "signal_generate",
                             "sys_openat", "task_newtask", "block_rq_issue", "kmalloc", "sys_exit"})
        EXPECT_GT(kernel_events[name], 0) << name << " did not happen in the workload";
    // Line by line where they differ, for a readable failure.
    std::vector<std::string> only_kernel, only_ours;
    std::set_difference(kernel.begin(), kernel.end(), ours.begin(), ours.end(),
                        std::back_inserter(only_kernel));
    std::set_difference(ours.begin(), ours.end(), kernel.begin(), kernel.end(),
                        std::back_inserter(only_ours));
    // An event may be missing where the kernel skipped tpsnoop's program while another ran on
    // the CPU: in an interrupt, or fired in the task as a run ends (wide_text_test.cpp). Every
    // line tpsnoop printed the kernel printed, and its lines outside interrupts that tpsnoop
    // lacks are no more than the runs it said were skipped.
    std::vector<std::string> only_kernel_in_task;
    std::set_difference(only_kernel.begin(), only_kernel.end(), in_interrupts.begin(),
                        in_interrupts.end(), std::back_inserter(only_kernel_in_task));
    EXPECT_LE(only_kernel_in_task.size(), tpkit::live::skipped_runs(tool.stderr_text()))
        << "printed by the kernel, not by tpsnoop: "
        << testing::PrintToString(only_kernel_in_task) << "\ntpsnoop's stderr: " << tool.stderr_text();
    EXPECT_EQ(only_ours, std::vector<std::string>{}) << "printed by tpsnoop, not by the kernel";
    EXPECT_EQ(kernel.size(), ours.size() + only_kernel.size());
    if (!only_kernel.empty())
        std::printf("%zu lines in interrupts not seen by tpsnoop\n", only_kernel.size());
}
