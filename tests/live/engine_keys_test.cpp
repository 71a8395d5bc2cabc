// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The generic engines' stack and composite keys against known events: a child makes a known
// number of getppid() calls from a known chain of functions of this binary, and tpcount must
// count exactly those under a user stack naming the chain and a kernel stack through
// do_syscall_64; two children with known comms are counted apart by pid,comm; tphist heads a
// per-pid histogram with the process's comm; numeric keys sort as numbers; a task waiting in
// vfork() has its kernel frames named as /proc/PID/stack names them.
//
// Built with frame pointers (tests/CMakeLists.txt): user stacks are walked by them.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::poke_attempts;
using tpkit::live::poke_wait;
using tpkit::live::ToolRun;

// The system calls are made here, not in libc: libc's wrappers keep no frame pointer, so the
// function calling them would be missing from the stack.
extern "C" TPKIT_NAMED_FRAME int tpk_stack_inner(int calls)
{
    // A frame of its own even as a leaf: the walk finds its caller through it.
    asm volatile("" ::"r"(__builtin_frame_address(0)));
    for (int i = 0; i < calls; i++) {
#if defined(__x86_64__)
        long ret;
        asm volatile("syscall" : "=a"(ret) : "a"(SYS_getppid) : "rcx", "r11", "memory");
#else
        syscall(SYS_getppid);
#endif
    }
    return 0;
}

// Each returns after its call (no tail call), so that its frame is on the stack.
extern "C" TPKIT_NAMED_FRAME int tpk_stack_middle(int calls)
{
    int ret = tpk_stack_inner(calls);
    asm volatile("" ::: "memory");
    return ret;
}

extern "C" TPKIT_NAMED_FRAME int tpk_stack_outer(int calls)
{
    int ret = tpk_stack_middle(calls);
    asm volatile("" ::: "memory");
    return ret;
}

// A marker from another function: its events fall under another stack.
extern "C" TPKIT_NAMED_FRAME int tpk_stack_marker()
{
    int ret = tpk_stack_inner(1);
    asm volatile("" ::: "memory");
    return ret;
}

namespace {

constexpr int chain_calls = 37;

bool has(const std::string& line, const std::string& text) { return line.find(text) != std::string::npos; }

// The objects among the tool's lines once it stopped on SIGINT, with nothing on stderr.
std::vector<nlohmann::json> objects_of(ToolRun& tool)
{
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.stderr_text(), "");
    std::vector<nlohmann::json> objects;
    for (const auto& line : tool.lines()) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        EXPECT_TRUE(j.is_object()) << line;
        if (j.is_object())
            objects.push_back(j);
    }
    return objects;
}

// Whether FRAMES (root first) hold `chain` one after the other.
bool holds_chain(const nlohmann::json& frames, const std::vector<std::string>& chain)
{
    std::vector<std::string> names;
    for (const auto& f : frames)
        names.push_back(f.get<std::string>());
    return std::search(names.begin(), names.end(), chain.begin(), chain.end()) != names.end();
}

bool has_frame(const nlohmann::json& frames, const std::string& name)
{
    return std::any_of(frames.begin(), frames.end(), [&](const auto& f) { return f == name; });
}

// A child at whose every act_once() the chain makes chain_calls getppid() calls, or the marker
// one, as *marker_mode says (shared with it); alive until destroyed, so that its mappings can be
// read when the tool prints.
struct Caller {
    int* marker_mode = static_cast<int*>(
        mmap(nullptr, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    tpkit::live::ScriptedChild child{
        "tpk-ustack", {},
        [mode = marker_mode] { return *mode ? tpk_stack_marker() : tpk_stack_outer(chain_calls); },
        tpkit::live::ScriptedChild::Acts::on_request};
    ~Caller() { munmap(marker_mode, sizeof(int)); }

    int act(bool marker)
    {
        *marker_mode = marker;
        return child.act_once();
    }
};

} // namespace

TEST(TpcountStacks, UserStackOfAKnownChainCountedExactly)
{
    TPKIT_REQUIRE_LIVE();
    Caller caller;
    ToolRun tool({tpkit::live::tool_path("tpcount"), "raw_syscalls:sys_enter", "--filter",
                  "id == " + std::to_string(SYS_getppid), "--by", "ustack", "-p",
                  std::to_string(caller.child.pid()), "--json", "0.1"});
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [&] { caller.act(true); },
        [](const std::string& l) { return has(l, "\"tpk_stack_marker\""); },
        poke_attempts, poke_wait))
        << tool.stderr_text() << (tool.lines().empty() ? "" : tool.lines().back());
    ASSERT_EQ(caller.act(false), 0);
    std::uint64_t chain = 0;
    for (const auto& o : objects_of(tool)) {
        // comm is the root frame of folded stacks, and so part of the key.
        EXPECT_EQ(o["comm"], "tpk-ustack") << o;
        EXPECT_EQ(o["event"], "raw_syscalls:sys_enter") << o;
        ASSERT_TRUE(o["ustack"].is_array()) << o;
        if (holds_chain(o["ustack"], {"tpk_stack_outer", "tpk_stack_middle", "tpk_stack_inner"})) {
            EXPECT_EQ(o["ustack"].back(), "tpk_stack_inner") << o; // the innermost last
            chain += o["count"].get<std::uint64_t>();
        } else {
            EXPECT_TRUE(holds_chain(o["ustack"], {"tpk_stack_marker", "tpk_stack_inner"})) << o;
        }
    }
    EXPECT_EQ(chain, static_cast<std::uint64_t>(chain_calls));
}

TEST(TpcountStacks, FoldedTextIsCommThenUserFramesRootFirst)
{
    TPKIT_REQUIRE_LIVE();
    Caller caller;
    ToolRun tool({tpkit::live::tool_path("tpcount"), "raw_syscalls:sys_enter", "--filter",
                  "id == " + std::to_string(SYS_getppid), "--by", "ustack", "-p",
                  std::to_string(caller.child.pid()), "0.1"});
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [&] { caller.act(true); },
        [](const std::string& l) { return has(l, ";tpk_stack_marker;"); },
        poke_attempts, poke_wait))
        << tool.stderr_text();
    ASSERT_EQ(caller.act(false), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const std::string chain_line_end =
        ";tpk_stack_outer;tpk_stack_middle;tpk_stack_inner " + std::to_string(chain_calls);
    int chain_lines = 0;
    for (const auto& line : tool.lines()) {
        if (line.empty())
            continue;
        EXPECT_EQ(line.rfind("tpk-ustack;", 0), 0u) << line;
        chain_lines += line.ends_with(chain_line_end);
    }
    EXPECT_EQ(chain_lines, 1) << "no line ends in " << chain_line_end;
}

TEST(TpcountStacks, KernelStackThroughTheSyscallEntryCountedExactlyByPid)
{
    TPKIT_REQUIRE_LIVE();
    Caller caller;
    const std::string child_pid = std::to_string(caller.child.pid());
    ToolRun tool({tpkit::live::tool_path("tpcount"), "raw_syscalls:sys_enter", "--filter",
                  "id == " + std::to_string(SYS_getppid), "--by", "pid,kstack", "--json", "0.1"});
    // Markers from this process: the child's count stays exact.
    const std::string own_pid = "\"pid\":" + std::to_string(getpid()) + ",";
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [] { syscall(SYS_getppid); }, [&](const std::string& l) { return has(l, own_pid); },
        poke_attempts, poke_wait))
        << tool.stderr_text();
    ASSERT_EQ(caller.act(false), 0);
    std::uint64_t counted = 0;
    for (const auto& o : objects_of(tool)) {
        ASSERT_TRUE(o["kstack"].is_array()) << o;
        if (o["pid"] != caller.child.pid())
            continue;
        EXPECT_TRUE(has_frame(o["kstack"], "do_syscall_64")) << o;
        // The stack begins in the traced code, not in the tool's own program.
        EXPECT_FALSE(std::any_of(o["kstack"].begin(), o["kstack"].end(), [](const auto& f) {
            return f.template get<std::string>().starts_with("bpf_") ||
                   f.template get<std::string>().starts_with("__traceiter");
        })) << o;
        counted += o["count"].get<std::uint64_t>();
    }
    EXPECT_EQ(counted, static_cast<std::uint64_t>(chain_calls));
}

namespace {

// vfork(), whose child sleeps a while before it exits: the caller waits in the kernel meanwhile.
// Raw system calls only (a forked copy of a threaded process).
int vfork_and_wait()
{
    pid_t pid = vfork();
    if (pid == 0) {
        timespec nap{0, 400'000'000};
        nanosleep(&nap, nullptr);
        _exit(0);
    }
    int status = 0;
    return pid < 0 ? 1 : waitpid(pid, &status, 0) != pid || status != 0 ? 2 : 0;
}

// The kernel's own names of a task's frames, innermost first, from /proc/PID/stack
// ("[<0>] __do_sys_vfork+0x66/0x90"), once they hold a frame containing `waiting_in`.
std::vector<std::string> kernel_names_of_stack(pid_t pid, const std::string& waiting_in)
{
    constexpr int reads = 300; // a millisecond apart
    for (int attempt = 0; attempt < reads; attempt++) {
        std::vector<std::string> names;
        std::ifstream stack("/proc/" + std::to_string(pid) + "/stack");
        for (std::string line; std::getline(stack, line);) {
            auto start = line.find("] ");
            if (start != std::string::npos)
                names.push_back(line.substr(start + 2, line.find('+') - start - 2));
        }
        if (std::any_of(names.begin(), names.end(), [&](const auto& n) { return has(n, waiting_in); }))
            return names;
        std::this_thread::sleep_for(1ms);
    }
    return {};
}

} // namespace

TEST(TpcountStacks, KernelFramesAreNamedAsTheKernelNamesThemWithCommAtTheRoot)
{
    TPKIT_REQUIRE_LIVE();
    ToolRun tool({tpkit::live::tool_path("tpcount"), "sched:sched_switch", "--comm", "tpk-vfork",
                  "--by", "kstack,comm"});
    constexpr std::size_t links = 1; // sched_switch
    ASSERT_TRUE(tool.wait_until_attached(links, tpkit::live::patient(20s))) << tool.stderr_text();
    tpkit::live::ScriptedChild child("tpk-vfork", {}, vfork_and_wait);
    child.go();
    // While it waits in vfork(), as the kernel names its frames (the scheduler's left out).
    const auto kernel_names = kernel_names_of_stack(child.pid(), "vfork");
    ASSERT_EQ(child.wait(), 0);
    ASSERT_FALSE(kernel_names.empty()) << "no vfork frame in /proc/" << child.pid() << "/stack";
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    // Folded, root first: the comm, then the kernel's frames from the syscall entry on.
    std::string chain = "tpk-vfork";
    for (auto it = kernel_names.rbegin(); it != kernel_names.rend(); ++it)
        chain += ';' + *it;
    int waits = 0;
    for (const auto& line : tool.lines()) {
        if (line.empty())
            continue;
        EXPECT_EQ(line.rfind("tpk-vfork;", 0), 0u) << line;
        EXPECT_FALSE(has(line, ";__pfx_") || has(line, ";__ia32_")) << line;
        waits += line.rfind(chain + ';', 0) == 0;
    }
    EXPECT_GE(waits, 1) << "no line begins with " << chain;
}

namespace {

// A child named `comm` that makes `calls` getppid() calls once let go, then exits.
tpkit::live::ScriptedChild getppid_caller(const std::string& comm, int calls)
{
    return {comm, {}, [calls] { return tpk_stack_inner(calls); }};
}

} // namespace

TEST(TpcountExact, ByPidAndCommCountsEachChild)
{
    TPKIT_REQUIRE_LIVE();
    ToolRun tool({tpkit::live::tool_path("tpcount"), "raw_syscalls:sys_enter", "--filter",
                  "id == " + std::to_string(SYS_getppid), "--by", "pid,comm", "--json", "0.1"});
    const std::string own_pid = "\"pid\":" + std::to_string(getpid()) + ",";
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [] { syscall(SYS_getppid); }, [&](const std::string& l) { return has(l, own_pid); },
        poke_attempts, poke_wait))
        << tool.stderr_text();
    constexpr std::uint64_t a_calls = 5, b_calls = 9;
    auto a = getppid_caller("tpk-pc-a", a_calls);
    auto b = getppid_caller("tpk-pc-b", b_calls);
    ASSERT_EQ(a.go_and_wait(), 0);
    ASSERT_EQ(b.go_and_wait(), 0);
    std::map<std::pair<pid_t, std::string>, std::uint64_t> counts;
    for (const auto& o : objects_of(tool)) {
        // Each part under its own name, the pid a number.
        ASSERT_TRUE(o["pid"].is_number() && o["comm"].is_string()) << o;
        counts[{o["pid"].get<pid_t>(), o["comm"].get<std::string>()}] += o["count"].get<std::uint64_t>();
    }
    EXPECT_EQ((counts[{a.pid(), "tpk-pc-a"}]), a_calls);
    EXPECT_EQ((counts[{b.pid(), "tpk-pc-b"}]), b_calls);
}

TEST(TphistExact, ByPidHeadedWithTheComm)
{
    TPKIT_REQUIRE_LIVE();
    ToolRun tool({tpkit::live::tool_path("tphist"), "raw_syscalls:sys_enter", "id", "--filter",
                  "id == " + std::to_string(SYS_getppid), "--by", "pid", "--json", "0.1"});
    const std::string own_key = "\"key\":\"" + std::to_string(getpid()) + " ";
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [] { syscall(SYS_getppid); }, [&](const std::string& l) { return has(l, own_key); },
        poke_attempts, poke_wait))
        << tool.stderr_text();
    // It exits before the tool prints: the comm is the one BPF kept.
    constexpr std::uint64_t calls = 6;
    auto child = getppid_caller("tpk-hist-pid", calls);
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    auto totals = tpkit::live::histogram_totals(tool.lines());
    EXPECT_EQ(totals[std::to_string(child.pid()) + " tpk-hist-pid"], calls);
}

TEST(TphistExact, NumericKeysSortAsNumbers)
{
    TPKIT_REQUIRE_LIVE();
    // In ascending order: should an interval end between them, the later ones print later
    // still, so the order holds either way; as text, 10 and 100 would come before 9.
    auto child = tpkit::live::ScriptedChild("tpk-sorted", {}, [] {
        for (int fd : {9, 10, 100})
            lseek(fd, 0, SEEK_SET);
        return 0;
    });
    ToolRun tool({tpkit::live::tool_path("tphist"), "syscalls:sys_enter_lseek", "offset", "--by",
                  "fd", "--json", "0.1", "--filter",
                  "common_pid == " + std::to_string(child.pid()) + " || fd == 1000"});
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [] { lseek(1000, 0, SEEK_SET); },
        [&](const std::string& l) { return has(l, "\"key\":\"1000\""); }, poke_attempts, poke_wait))
        << tool.stderr_text();
    ASSERT_EQ(child.go_and_wait(), 0);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    std::vector<std::string> order;
    for (const auto& line : tool.lines()) {
        auto key = tpkit::live::parse_flat_json(line)["key"];
        if (key == "9" || key == "10" || key == "100")
            order.push_back(key);
    }
    EXPECT_EQ(order, (std::vector<std::string>{"9", "10", "100"}));
}
