// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Syscall events through raw_syscalls (the default) against the classic tracepoints
// (--classic), on the same workload: a child makes a known mix of syscalls, some failing, some
// whose events are named apart from their syscall (newuname, newfstat), and one 32-bit syscall
// through int $0x80, which the kernel's syscall events leave out. Both paths must count, key and
// decode exactly the same, and exactly what was made.
#include "live.hpp"
#include "marked_workload.hpp"
#include "tool_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr const char* comm = "tpkit-sysmix";
constexpr int rounds = 3;
// The calls of each syscall in one round of the mix.
constexpr int mix_getuids = 3, mix_openats = 2, mix_closes = 4, mix_unames = 1, mix_fstats = 1,
              mix_sched_yields = 2;
const char* missing_path = "/nonexistent/tpkit-sysmix";

// Whether this kernel takes 32-bit syscalls through int $0x80. Without IA32 emulation (not built
// in, or ia32_emulation=0) the instruction raises a general protection fault: SIGSEGV. Asked
// before the workload forks, so that its children only read the answer.
bool compat_syscalls()
{
    static const bool works = [] {
        pid_t pid = fork();
        if (pid == 0) {
            long ret;
            asm volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
            _exit(0);
        }
        int status = 0;
        return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
               WEXITSTATUS(status) == 0;
    }();
    return works;
}

// One round of the mix, raw syscalls only (it runs in a forked child); 0 when each call gave
// what it should.
int mix()
{
    struct utsname names;
    struct stat st;
    // The path's page read in: BPF, which reads it at the entry (tpsnoop's filename_sym), cannot
    // fault in a page this fresh child has not touched yet.
    // A volatile load: the compiler knows the path's first byte and would not read it otherwise.
    [[maybe_unused]] char first = *static_cast<const volatile char*>(missing_path);
    for (int i = 0; i < mix_getuids; i++)
        syscall(SYS_getuid);
    for (int i = 0; i < mix_openats; i++)
        // mode given, although unused: otherwise the register holds whatever was there
        if (syscall(SYS_openat, AT_FDCWD, missing_path, O_RDONLY, 0640) != -1 || errno != ENOENT)
            return 1;
    for (int i = 0; i < mix_closes; i++)
        if (syscall(SYS_close, -1) != -1 || errno != EBADF)
            return 2;
    static_assert(mix_unames == 1 && mix_fstats == 1);
    if (syscall(SYS_uname, &names) != 0)
        return 3;
    if (syscall(SYS_fstat, -1, &st) != -1 || errno != EBADF)
        return 4;
    for (int i = 0; i < mix_sched_yields; i++)
        syscall(SYS_sched_yield);
    // getpid of the 32-bit ABI (20), which is writev (20) in the 64-bit one: the kernel's events
    // leave it out. Where the kernel has no 32-bit syscalls there is nothing to leave out.
    if (compat_syscalls()) {
        long ret;
        asm volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
    }
    return 0;
}

// The mix on request, with the getppid marker. compat_syscalls() is asked before the children
// fork, so that they only read its answer.
struct Workload : tpkit::live::MarkedWorkload {
    Workload() : MarkedWorkload(comm, (compat_syscalls(), mix)) {}
    std::size_t rounds_then_stop(ToolRun& tool) { return MarkedWorkload::rounds_then_stop(tool, rounds); }
};

const std::vector<std::string> mix_syscalls{"getuid", "openat", "close", "newuname",
                                            "newfstat", "sched_yield", "writev", "getpid"};

std::vector<std::string> events(const std::string& side, bool with_marker)
{
    std::vector<std::string> names;
    for (const auto& s : mix_syscalls)
        names.push_back("syscalls:sys_" + side + "_" + s);
    if (with_marker)
        names.push_back("syscalls:sys_" + side + "_getppid");
    return names;
}

// tpcount over EVENTS (the getppid marker's among them) with OPTIONS, while the caller makes
// `rounds` rounds: the counts by event and key, the marker's left out.
std::map<std::string, std::uint64_t> count_rounds(const std::vector<std::string>& event_names,
                                                  const std::vector<std::string>& options)
{
    Workload work;
    std::vector<std::string> argv{tpkit::live::tool_path("tpcount")};
    argv.insert(argv.end(), event_names.begin(), event_names.end());
    argv.insert(argv.end(), {"--comm", comm, "--json", "0.1"});
    argv.insert(argv.end(), options.begin(), options.end());
    ToolRun tool(argv);
    work.until_seen_by(tool);
    // The path taken: one program on raw_syscalls for every event of a side, or one each.
    bool classic = std::find(options.begin(), options.end(), "--classic") != options.end();
    auto held = tpkit::live::programs_held_by(tool.pid());
    auto on_raw = std::count_if(held.begin(), held.end(),
                                [](const auto& p) { return p.name == "count_syscall"; });
    EXPECT_EQ(on_raw, classic ? 0 : 1);
    EXPECT_EQ(held.size(), classic ? event_names.size() : 1u);
    auto before = work.rounds_then_stop(tool);
    std::map<std::string, std::uint64_t> counts;
    for (std::size_t i = before; i < tool.lines().size(); i++) {
        auto obj = tpkit::live::parse_flat_json(tool.lines()[i]);
        if (!obj.count("count") || obj["event"].find("getppid") != std::string::npos)
            continue;
        std::string key = obj["event"];
        if (obj.count("key"))
            key += " " + obj["key"];
        else if (obj.count("ret"))
            key += " " + obj["ret"];
        counts[key] += std::stoull(obj["count"]);
    }
    return counts;
}

// What `rounds` rounds of the mix make of each syscall event of `side` ("enter", "exit").
std::map<std::string, std::uint64_t> mix_counts(const std::string& side)
{
    const std::string prefix = "syscalls:sys_" + side + "_";
    return {
        {prefix + "getuid", mix_getuids * rounds},
        {prefix + "openat", mix_openats * rounds},
        {prefix + "close", mix_closes * rounds},
        {prefix + "newuname", mix_unames * rounds},
        {prefix + "newfstat", mix_fstats * rounds},
        {prefix + "sched_yield", mix_sched_yields * rounds},
    };
}

std::map<std::string, std::uint64_t> per_event(const std::map<std::string, std::uint64_t>& counts)
{
    std::map<std::string, std::uint64_t> totals;
    for (const auto& [key, n] : counts)
        totals[key.substr(0, key.find(' '))] += n;
    return totals;
}

} // namespace

TEST(RawSyscallsExact, EntriesCountedAsTheClassicEventsCountThem)
{
    TPKIT_REQUIRE_LIVE();
    const auto expected = mix_counts("enter");
    auto raw = count_rounds(events("enter", true), {});
    auto classic = count_rounds(events("enter", true), {"--classic"});
    EXPECT_EQ(raw, expected);
    EXPECT_EQ(classic, expected);
}

TEST(RawSyscallsExact, ReturnsKeyedAsTheClassicEventsKeyThem)
{
    TPKIT_REQUIRE_LIVE();
    const auto expected = mix_counts("exit");
    auto raw = count_rounds(events("exit", true), {"--by", "ret"});
    auto classic = count_rounds(events("exit", true), {"--by", "ret", "--classic"});
    EXPECT_EQ(per_event(raw), expected);
    EXPECT_EQ(raw, classic); // the same return values
    EXPECT_EQ(raw.size(), expected.size()) << "one return value per syscall of the mix";
}

namespace {

// tpsnoop's JSON objects of the caller's rounds, without what differs from run to run.
std::vector<std::string> snoop_rounds(const std::vector<std::string>& options)
{
    Workload work;
    std::vector<std::string> argv{tpkit::live::tool_path("tpsnoop"), "syscalls:sys_enter_openat",
                                  "syscalls:sys_exit_openat", "syscalls:sys_exit_close",
                                  "syscalls:sys_enter_newfstat", "syscalls:sys_enter_getppid",
                                  "--comm", comm, "--json"};
    argv.insert(argv.end(), options.begin(), options.end());
    ToolRun tool(argv);
    work.until_seen_by(tool);
    auto before = work.rounds_then_stop(tool);
    std::vector<std::string> records;
    for (std::size_t i = before; i < tool.lines().size(); i++) {
        auto obj = tpkit::live::parse_flat_json(tool.lines()[i]);
        if (!obj.count("fields") || obj["event"].find("getppid") != std::string::npos)
            continue;
        EXPECT_EQ(obj["pid"], std::to_string(work.caller.pid()));
        records.push_back(obj["event"] + " " + obj["fields"]);
    }
    return records;
}

} // namespace

TEST(RawSyscallsExact, RecordsDecodedAsTheClassicEventsDecodeThem)
{
    TPKIT_REQUIRE_LIVE();
    auto raw = snoop_rounds({});
    auto classic = snoop_rounds({"--classic"});
    // Entries and returns of openat, returns of close, entries of newfstat.
    constexpr int records_a_round = mix_openats + mix_openats + mix_closes + mix_fstats;
    EXPECT_EQ(raw.size(), static_cast<std::size_t>(records_a_round * rounds));
    EXPECT_EQ(raw, classic);
    char path[32];
    std::snprintf(path, sizeof(path), "0x%llx",
                  static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(missing_path)));
    std::size_t opens = 0;
    for (const auto& r : raw)
        if (r.find("sys_enter_openat") != std::string::npos) {
            opens++;
            EXPECT_NE(r.find(path), std::string::npos) << r; // the filename argument, as sent
            EXPECT_NE(r.find(std::string("\"filename_sym\":\"") + missing_path + "\""),
                      std::string::npos) << r; // and the string it points to
            EXPECT_NE(r.find("\"mode\":416"), std::string::npos) << r;
        }
    EXPECT_EQ(opens, static_cast<std::size_t>(mix_openats * rounds));
}
