// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What every tool of TPKIT_TOOLS promises (tpkit(8): help ending with examples, one-line errors
// with the documented exit codes, clean ends, JSON lines), checked for each tool of the list so
// that a new tool gets the same checks; and the task filters every tracing tool shares (-t, -u,
// --cgroup), checked exactly through forksnoop.
#include "cgroup_scope.hpp"
#include "compaction_writer.hpp"
#include "futex_waits.hpp"
#include "json_schema.hpp"
#include "live.hpp"
#include "lossy_flow.hpp"
#include "loop_device.hpp"
#include "net_namespace.hpp"
#include "tool_run.hpp"

#include "tpkit/run/stream.hpp"

#include <tpkit/kernel/tracefs.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <mntent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

std::vector<std::string> all_tools()
{
    std::vector<std::string> tools;
    std::stringstream list(TPKIT_TOOLS_LIST);
    for (std::string name; std::getline(list, name, ',');)
        if (!name.empty())
            tools.push_back(name);
    return tools;
}

enum class Kind {
    generator, // writes files from formats and BTF: no BPF, no common options
    lister,    // reads tracefs, prints, exits: no BPF
    tracer,    // loads and attaches BPF programs, runs until stopped
};

// What the checks need to know of each tool. A tool added to TPKIT_TOOLS and not here fails
// CrossTool/AnyTool.IsDescribed until it is added.
struct ToolSpec {
    std::string name;
    Kind kind;
    std::vector<std::string> minimal_args; // a valid run with nothing optional; "{test_pid}": ours
    std::vector<std::string> programs;     // its BPF programs then, named as the kernel keeps them
    std::size_t links = 0;                 // BPF links it holds once attached
    bool streaming = false;                // --json: one line per event, then {"type":"lost",…}
    bool memory_events = false;            // its events need a memory cgroup (reclaim, OOM)
    bool task_filters = true;              // -p, -t, -u, --cgroup, --comm (add_task_filters)
    // A line the tool rightly prints on stderr for what no test controls (a regex).
    std::string may_report = {};
    bool compaction_events = false; // its events need a compaction (a write to compact_memory)
};

const std::vector<ToolSpec> specs{
    {"forksnoop", Kind::tracer, {}, {"fork_tp"}, 1, true},
    {"oomkill", Kind::tracer, {}, {"mark_victim_rec", "mark_victim_tas"}, 2, true, true},
    {"netrxlen", Kind::tracer, {}, {"packet_received"}, 1, false, false, false},
    {"nettxlen", Kind::tracer, {}, {"packet_sent"}, 1, false},
    {"softirqs", Kind::tracer, {}, {"softirq_entered", "softirq_exited"}, 2, false},
    {"hardirqs", Kind::tracer, {}, {"handler_entered", "handler_exited"}, 2, false},
    {"tpgen", Kind::generator, {"sched:sched_process_fork"}, {}, 0, false},
    {"tplist", Kind::lister, {}, {}, 0, false},
    {"tpsnoop", Kind::tracer, {"sched:sched_process_fork"}, {"snoop_event"}, 1, true},
    {"tpcount", Kind::tracer, {"sched:sched_process_fork"}, {"count_event"}, 1, false},
    {"tphist", Kind::tracer, {"sched:sched_process_fork", "child_pid"}, {"hist_event"}, 1, false},
    // A pair every start of which ends: stderr stays empty (no start replaced).
    {"tplat", Kind::tracer, {"syscalls:sys_enter_getpid", "syscalls:sys_exit_getpid"},
     {"lat_event", "lat_event"}, 2, false},
    {"syscount", Kind::tracer, {}, {"count_enter"}, 1, false},
    {"exitsnoop", Kind::tracer, {}, {"process_exit"}, 1, true},
    {"sigsnoop", Kind::tracer, {}, {"signal_generate"}, 1, true},
    {"killsnoop", Kind::tracer, {},
     {"kill_entry", "kill_exit", "tkill_entry", "tkill_exit", "tgkill_entry", "tgkill_exit",
      "signal_generate"},
     7, true},
    {"syncsnoop", Kind::tracer, {},
     {"sync_entry", "syncfs_entry", "fsync_entry", "fdatasync_entry", "msync_entry",
      "sync_file_range"},
     6, true},
    {"mountsnoop", Kind::tracer, {},
     {"mount_entry", "mount_exit", "umount_entry", "umount_exit", "fsopen_entry", "fsopen_exit",
      "fsconfig_entry", "fsconfig_exit", "fsmount_entry", "fsmount_exit", "move_mount_entr",
      "move_mount_exit"},
     12, true},
    {"capable", Kind::tracer, {}, {"cap_check"}, 1, true},
    {"drsnoop", Kind::tracer, {}, {"direct_begin", "direct_end", "memcg_begin", "memcg_end"}, 4, true,
     true},
    {"runqlat", Kind::tracer, {}, {"task_woken", "task_woken_new", "task_switched"}, 3, false},
    {"runqslower", Kind::tracer, {"1"}, {"task_woken", "task_woken_new", "task_switched"}, 3, true},
    {"cpudist", Kind::tracer, {}, {"task_switched"}, 1, false},
    {"execsnoop", Kind::tracer, {},
     {"execve_entry", "execve_exit", "execveat_entry", "execveat_exit"}, 4, true},
    {"opensnoop", Kind::tracer, {},
     {"open_entry", "open_exit", "openat_entry", "openat_exit", "openat2_entry", "openat2_exit"},
     6, true},
    {"statsnoop", Kind::tracer, {},
     {"statfs_entry", "statfs_exit", "newstat_entry", "newstat_exit", "statx_entry", "statx_exit",
      "newfstatat_entr", "newfstatat_exit", "newlstat_entry", "newlstat_exit"},
     10, true},
    // Only this test's own blocking (waiting for its children): far fewer stacks than the whole
    // machine's. Even a few dozen collide in the stack map's 16,384 buckets one run in twenty,
    // which offcputime rightly reports.
    {"offcputime", Kind::tracer, {"-p", "{test_pid}"}, {"sched_switch"}, 1, false, false, true,
     R"(offcputime: [0-9]+ stacks could not be recorded \(raise --stack-storage-size\))"},
    {"tcpstates", Kind::tracer, {}, {"state_change"}, 1, true},
    {"tcplife", Kind::tracer, {}, {"state_change"}, 1, true},
    {"tcpconnect", Kind::tracer, {}, {"connect_start"}, 1, true},
    {"tcpaccept", Kind::tracer, {}, {"accept_exit", "accept4_exit"}, 2, true},
    {"tcprtt", Kind::tracer, {}, {"segment_receive"}, 1, false, false, false},
    {"solisten", Kind::tracer, {}, {"listen_entry", "listen_state", "listen_exit"}, 3, true},
    {"bindsnoop", Kind::tracer, {}, {"bind_entry", "bind_exit"}, 2, true},
    {"tcpretrans", Kind::tracer, {}, {"retransmit_skb", "retransmit_syna"}, 2, true},
    {"tcpdrop", Kind::tracer, {}, {"skb_dropped"}, 1, true},
    {"wqlat", Kind::tracer, {}, {"queue_work", "execute_start"}, 2, false},
    {"biolatency", Kind::tracer, {}, {"rq_issue", "rq_complete"}, 2, false},
    // block_io_start where the kernel has it (6.5+): io_start and one more link.
    {"biosnoop", Kind::tracer, {}, {"io_start", "rq_insert", "rq_issue", "rq_complete"}, 4, true},
    {"bitesize", Kind::tracer, {}, {"rq_insert", "rq_issue"}, 2, false},
    {"biopattern", Kind::tracer, {}, {"rq_complete"}, 1, false},
    {"biotop", Kind::tracer, {}, {"io_start", "rq_insert", "rq_issue", "rq_complete"}, 4, false},
    {"threadsnoop", Kind::tracer, {}, {"thread_created"}, 1, true},
    {"pidpersec", Kind::tracer, {}, {"task_created"}, 1, false},
    // User stacks of every contended wait on the machine: the stack map's 1,024 may fill.
    {"futexctn", Kind::tracer, {}, {"futex_entry", "futex_exit"}, 2, false, false, true,
     R"(futexctn: [0-9]+ stacks could not be recorded \(raise --stack-storage-size\))"},
    // Waker stacks of every wake-up of the test's own tasks.
    {"wakeuptime", Kind::tracer, {"-p", "{test_pid}"}, {"sched_switch", "sched_waking"}, 2, false,
     false, true, R"(wakeuptime: [0-9]+ stacks could not be recorded \(raise --stack-storage-size\))"},
    {"slabratetop", Kind::tracer, {}, {"cache_alloc"}, 1, false},
    {"tcptop", Kind::tracer, {}, {"sock_sent", "sock_received"}, 2, false},
    // A compaction, only for the tools that watch it: it compacts every zone of the machine.
    {"compactsnoop", Kind::tracer, {}, {"compaction_begi", "compaction_end"}, 2, true, false, true, {}, true},
    {"numamove", Kind::tracer, {}, {"migrate_start", "migrate_end"}, 2, false},
    {"sofdsnoop", Kind::tracer, {},
     {"sendmsg_entry", "sendmsg_exit", "recvmsg_entry", "recvmsg_exit", "sendmmsg_entry",
      "sendmmsg_exit", "recvmmsg_entry", "recvmmsg_exit"},
     8, true},
    {"readahead", Kind::tracer, {}, {"sync_ra", "async_ra", "ra_order", "ra_unbounded"}, 4, false},
    // Caller stacks of the test's own lock contention.
    {"klockstat", Kind::tracer, {"-p", "{test_pid}"}, {"wait_begin", "wait_end"}, 2, false, false,
     true, R"(klockstat: [0-9]+ stacks could not be recorded \(raise --stack-storage-size\))"},
};

const ToolSpec* spec_of(const std::string& tool)
{
    for (const auto& s : specs)
        if (s.name == tool)
            return &s;
    return nullptr;
}

// The tools whose kind is one of `kinds`, and those not described (their checks fail, saying so).
std::vector<std::string> tools_of_kind(std::initializer_list<Kind> kinds)
{
    std::vector<std::string> out;
    for (const auto& tool : all_tools()) {
        const ToolSpec* s = spec_of(tool);
        if (!s || std::find(kinds.begin(), kinds.end(), s->kind) != kinds.end())
            out.push_back(tool);
    }
    return out;
}

std::string param_name(const testing::TestParamInfo<std::string>& info)
{
    std::string name = info.param;
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)))
            c = '_';
    return name;
}

std::vector<std::string> tool_argv(const ToolSpec& spec, std::vector<std::string> extra = {})
{
    std::vector<std::string> argv{tpkit::live::tool_path(spec.name)};
    for (const auto& arg : spec.minimal_args)
        argv.push_back(arg == "{test_pid}" ? std::to_string(getpid()) : arg);
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
}

std::size_t line_count(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

// The lines of a tool's stderr other than those its spec allows (may_report).
std::string unexpected_stderr(const ToolSpec& spec, const std::string& err)
{
    if (spec.may_report.empty())
        return err;
    const std::regex allowed(spec.may_report);
    std::istringstream lines(err);
    std::string line, rest;
    while (std::getline(lines, line))
        if (!std::regex_match(line, allowed))
            rest += line + "\n";
    return rest;
}

#define REQUIRE_SPEC(tool)                                                                       \
    const ToolSpec* spec_ptr_ = spec_of(tool);                                                   \
    ASSERT_NE(spec_ptr_, nullptr) << (tool) << " is not described in cross_tool_test.cpp's specs"; \
    const ToolSpec& spec = *spec_ptr_

// A few events of every kind the tools' minimal runs watch: forks (a process and a thread), a
// getppid(), a UDP datagram received on the loopback, an fsync() and an umount2() that fail
// harmlessly (a pipe cannot be synced; a new directory is no mount point, which the kernel says
// after checking CAP_SYS_ADMIN), a kill() of signal 0, a stat() and an open() of /, an exec
// of /bin/true, threads contending for this process's mmap_lock, one TCP session on the loopback of a network namespace of its own, work queued
// on every CPU, and direct reads of a loop device.
void make_some_events()
{
    constexpr int fork_children = 2, fork_threads = 1;
    tpkit::live::run_fork_batch("tpk-xtool", fork_children, fork_threads);
    syscall(SYS_getppid);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
        sendto(fd, "tpkit", 5, 0, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 5) {
        close(fd);
        throw std::runtime_error("loopback datagram failed");
    }
    close(fd);
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    fsync(pipe_fds[0]);
    // The pipe's read end passed over a Unix socket, for sofdsnoop.
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0)
        throw std::runtime_error("socketpair failed");
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control{};
    char byte = 'x';
    struct iovec iov {&byte, 1};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof(control.buf);
    CMSG_FIRSTHDR(&msg)->cmsg_level = SOL_SOCKET;
    CMSG_FIRSTHDR(&msg)->cmsg_type = SCM_RIGHTS;
    CMSG_FIRSTHDR(&msg)->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(CMSG_FIRSTHDR(&msg)), &pipe_fds[0], sizeof(int));
    if (sendmsg(pair[0], &msg, 0) != 1 || recvmsg(pair[1], &msg, MSG_CMSG_CLOEXEC) != 1)
        throw std::runtime_error("passing a descriptor failed");
    int passed = -1;
    if (CMSG_FIRSTHDR(&msg))
        memcpy(&passed, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
    close(passed);
    close(pair[0]);
    close(pair[1]);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    char dir[] = "/tmp/tpk-xtool-XXXXXX";
    if (!mkdtemp(dir))
        throw std::runtime_error("mkdtemp failed");
    umount2(dir, 0);
    rmdir(dir);
    kill(getpid(), 0); // a kill() that sends nothing
    struct stat root_stat;
    stat("/", &root_stat);
    close(open("/", O_RDONLY | O_CLOEXEC));
    pid_t child = fork();
    if (child == 0) {
        execl("/bin/true", "true", nullptr);
        _exit(127);
    }
    waitpid(child, nullptr, 0);
    // A futex wait ended by a wake, for futexctn.
    child = fork();
    if (child == 0)
        _exit(tpkit::live::woken_futex_waits(1, {1000, 1000}));
    int futex_status = 0;
    waitpid(child, &futex_status, 0);
    if (!WIFEXITED(futex_status) || WEXITSTATUS(futex_status) != 0)
        throw std::runtime_error("woken futex wait failed");
    // Threads of this process mapping and unmapping memory at once contend for its mmap_lock,
    // for klockstat (which watches this process only).
    {
        std::vector<std::thread> mappers;
        for (int i = 0; i < 4; i++)
            mappers.emplace_back([] {
                for (int round = 0; round < 2000; round++) {
                    void* p = mmap(nullptr, 16 * 4096, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                    if (p == MAP_FAILED)
                        return;
                    static_cast<volatile char*>(p)[0] = 1;
                    munmap(p, 16 * 4096);
                }
            });
        for (auto& t : mappers)
            t.join();
    }
    {
        tpkit::live::NetNamespace ns;
        constexpr std::size_t request_bytes = 10, reply_bytes = 10;
        const auto session =
            tpkit::live::run_tcp_session(ns, tpkit::live::Inet::v4, 5000, request_bytes, reply_bytes);
        if (session.status != 0)
            throw std::runtime_error("TCP session failed");
        // A retransmit, for tcpretrans.
        constexpr std::uint64_t retransmits = 1;
        tpkit::live::LossyFlow flow(ns, tpkit::live::Inet::v4, tpkit::live::LossyFlow::Loss::data, 5001);
        flow.lose(ns, retransmits);
        std::uint16_t client_port = 0;
        if (flow.wait(client_port) != 0)
            throw std::runtime_error("lossy TCP flow failed");
    }
    // A read of stat_refresh queues work on every CPU (refresh_vm_stats), for wqlat.
    std::ifstream("/proc/sys/vm/stat_refresh").get();
    // Two block reads, one after the other, on a disk of its own (biopattern counts the second).
    tpkit::live::LoopDevice disk;
    tpkit::live::read_direct(disk.path(), {{0, 4096}, {4096, 4096}});
    // Reclaim and an OOM kill, inside a memory cgroup of their own (none where no memory cgroup
    // can be made: the other events are enough for the checks).
    if (tpkit::live::MemoryCgroup::unavailable_reason().empty())
        tpkit::live::run_memory_pressure("tpk-xtool-mem");
}

// Whether nobody, as ToolRun drops to it, can list `dir`.
bool listable_as_nobody(const std::string& dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        _exit(access(dir.c_str(), R_OK | X_OK) == 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}


} // namespace

// ---- every tool, tpgen included ----

class AnyTool : public testing::TestWithParam<std::string> {};

TEST_P(AnyTool, IsDescribed)
{
    EXPECT_NE(spec_of(GetParam()), nullptr)
        << GetParam() << ": add its minimal arguments, BPF programs and links to specs";
}

TEST_P(AnyTool, HelpEndsWithExamples)
{
    ToolRun run({tpkit::live::tool_path(GetParam()), "--help"});
    ASSERT_EQ(run.wait(10s), 0) << run.stderr_text();
    EXPECT_EQ(run.stderr_text(), "");
    std::vector<std::string> lines = run.lines();
    while (!lines.empty() && lines.back().empty())
        lines.pop_back();
    auto heading = std::find(lines.rbegin(), lines.rend(), "EXAMPLES:");
    ASSERT_NE(heading, lines.rend()) << "no EXAMPLES: heading";
    // Below it: only examples (indented; the first one runs the tool), no other section.
    auto first = heading.base();
    ASSERT_NE(first, lines.end()) << "EXAMPLES: is empty";
    EXPECT_EQ(first->rfind("  " + GetParam(), 0), 0u) << *first;
    for (auto it = first; it != lines.end(); ++it)
        EXPECT_TRUE(it->empty() || (*it)[0] == ' ') << "not an example line: " << *it;
}

TEST_P(AnyTool, UnknownFlagIsOneLineExitTwo)
{
    // Parsing comes before anything else: no privileges needed. After the required arguments,
    // so that the flag is what is wrong (alone, CLI11 reports the missing argument first).
    const ToolSpec* spec = spec_of(GetParam());
    ToolRun run(spec ? tool_argv(*spec, {"--no-such-flag"})
                     : std::vector<std::string>{tpkit::live::tool_path(GetParam()), "--no-such-flag"});
    EXPECT_EQ(run.wait(10s), 2) << run.stderr_text();
    const std::string& err = run.stderr_text();
    EXPECT_EQ(line_count(err), 1u) << err;
    EXPECT_EQ(err.rfind(GetParam() + ": ", 0), 0u) << err;
    EXPECT_NE(err.find("--no-such-flag"), std::string::npos) << err;
    EXPECT_TRUE(run.lines().empty());
}

// Every option that takes a value, as --completion-options lists them ("NAMES =" lines, what
// completes the value after the "="), refuses an empty one, given apart (-x '', --name '') or
// attached (--name=), before anything else runs.
TEST_P(AnyTool, EveryOptionRefusesAnEmptyValue)
{
    ToolRun list({tpkit::live::tool_path(GetParam()), "--completion-options"});
    ASSERT_EQ(list.wait(10s), 0) << list.stderr_text();
    const ToolSpec* spec = spec_of(GetParam());
    for (const std::string& line : list.lines()) {
        const auto equals = line.find(" =");
        if (equals == std::string::npos)
            continue;
        std::vector<std::vector<std::string>> empties;
        std::istringstream names(line.substr(0, equals));
        for (std::string name; names >> name;) {
            empties.push_back({name, ""});
            if (name.rfind("--", 0) == 0)
                empties.push_back({name + "="});
        }
        for (const auto& args : empties) {
            std::vector<std::string> argv{tpkit::live::tool_path(GetParam())};
            argv.insert(argv.end(), args.begin(), args.end());
            ToolRun run(spec ? tool_argv(*spec, args) : argv);
            const std::string name = args[0].substr(0, args[0].find('='));
            EXPECT_EQ(run.wait(10s), 2) << args[0] << ": " << run.stderr_text();
            EXPECT_EQ(run.stderr_text(), GetParam() + ": " + name + ": an empty value ('') (see --help)\n");
            EXPECT_TRUE(run.lines().empty()) << args[0];
        }
    }
    EXPECT_FALSE(list.lines().empty());
}

// Every numeric option refuses what no range check stops by itself: NaN and infinity for a
// number, a negative or past-2^64 value for an unsigned one. Which options take numbers, and of
// which kind, their answer to a word tells ("'x' is not a whole number from 0 in range"): a
// value is converted before --help is answered, which a text option then is (exit 0).
TEST_P(AnyTool, EveryNumericOptionRefusesUnusableNumbers)
{
    ToolRun list({tpkit::live::tool_path(GetParam()), "--completion-options"});
    ASSERT_EQ(list.wait(10s), 0) << list.stderr_text();
    const ToolSpec* spec = spec_of(GetParam());
    auto run_with = [&](const std::vector<std::string>& args) {
        std::vector<std::string> argv{tpkit::live::tool_path(GetParam())};
        argv.insert(argv.end(), args.begin(), args.end());
        return std::make_unique<ToolRun>(spec ? tool_argv(*spec, args) : argv);
    };
    std::size_t numeric = 0;
    bool has_duration = false;
    for (const std::string& line : list.lines()) {
        const auto equals = line.find(" =");
        if (equals == std::string::npos)
            continue;
        std::istringstream names(line.substr(0, equals));
        std::string name;
        for (std::string each; names >> each;)
            name = each; // the last: the long name where there is one
        has_duration = has_duration || name == "--duration";
        auto word = run_with({name, "x", "--help"});
        const int word_exit = word->wait(10s);
        EXPECT_TRUE(word_exit == 0 || word_exit == 2) << name << " x: " << word->stderr_text();
        const std::string& answer = word->stderr_text();
        const bool is_unsigned = answer.find("whole number from 0") != std::string::npos ||
                                 answer.find("positive whole number") != std::string::npos;
        const bool is_float = !is_unsigned && answer.find("whole number") == std::string::npos &&
                              answer.find("number") != std::string::npos;
        if (!is_unsigned && !is_float)
            continue;
        ++numeric;
        const std::vector<std::string> values = is_float
                                                    ? std::vector<std::string>{"nan", "inf", "-nan"}
                                                    : std::vector<std::string>{"-1", "18446744073709551616"};
        for (const std::string& value : values) {
            auto run = run_with({name, value});
            EXPECT_EQ(run->wait(10s), 2) << name << " " << value << ": " << run->stderr_text();
            EXPECT_EQ(line_count(run->stderr_text()), 1u) << run->stderr_text();
            EXPECT_NE(run->stderr_text().find(value), std::string::npos) << run->stderr_text();
            EXPECT_TRUE(run->lines().empty()) << name << " " << value;
        }
    }
    if (has_duration)
        EXPECT_GT(numeric, 0u) << "--duration takes a number";
}

INSTANTIATE_TEST_SUITE_P(CrossTool, AnyTool, testing::ValuesIn(all_tools()), param_name);

// `tpkit` alone lists every tool it runs (all but tpgen), one line each within 80 columns.
TEST(Multicall, NoArgumentsListsEveryToolOnALineOfItsOwn)
{
    ToolRun run({tpkit::live::tool_path("tpkit")});
    EXPECT_EQ(run.wait(10s), 2) << run.stderr_text();
    std::set<std::string> listed;
    for (const std::string& line : run.lines()) {
        if (line.rfind("  ", 0) != 0)
            continue;
        std::istringstream words(line);
        std::string name, summary;
        words >> name;
        std::getline(words, summary);
        listed.insert(name);
        const auto columns = std::count_if(line.begin(), line.end(), [](char c) {
            return (static_cast<unsigned char>(c) & 0xc0) != 0x80; // UTF-8: lead bytes only
        });
        EXPECT_LE(columns, 80) << line;
        EXPECT_GT(summary.size(), 10u) << line;
    }
    for (const std::string& tool : all_tools())
        if (tool != "tpgen")
            EXPECT_TRUE(listed.contains(tool)) << tool;
    EXPECT_EQ(listed.size(), all_tools().size() - 1);
}

// ---- tools that read tracefs or load BPF ----

class LiveTool : public testing::TestWithParam<std::string> {};

TEST_P(LiveTool, WithoutPrivilegesExitThreeOneLine)
{
    TPKIT_REQUIRE_LIVE(); // root, to drop to nobody
    REQUIRE_SPEC(GetParam());
    ToolRun run(tool_argv(spec), "nobody");
    int status = run.wait(20s);
    const std::string& err = run.stderr_text();
    if (spec.kind == Kind::lister &&
        listable_as_nobody((tpkit::tracefs_root() / "events").string())) {
        // Listing needs no privileges where tracefs is readable by all.
        EXPECT_EQ(status, 0) << err;
        EXPECT_EQ(err, "");
        EXPECT_FALSE(run.lines().empty());
        return;
    }
    EXPECT_EQ(status, 3) << err;
    EXPECT_EQ(line_count(err), 1u) << err;
    EXPECT_EQ(err.rfind(spec.name + ": ", 0), 0u) << err;
    EXPECT_TRUE(run.lines().empty()) << run.lines().front();
}

// Every tool's lines in one schema (docs/json.md): checked line by line, and the keys two tools
// share of one JSON type in both (one schema for all the tools this run checks).
tpkit::live::JsonSchema& json_schema()
{
    static tpkit::live::JsonSchema schema;
    return schema;
}

TEST_P(LiveTool, JsonLinesFollowTheSchema)
{
    TPKIT_REQUIRE_LIVE();
    REQUIRE_SPEC(GetParam());
    if (spec.memory_events)
        TPKIT_REQUIRE_MEMORY_CGROUP();
    ToolRun run(tool_argv(spec, {"--json"}));
    int status;
    if (spec.links) {
        ASSERT_TRUE(run.wait_until_attached(spec.links, 20s)) << run.stderr_text();
        make_some_events();
        if (spec.compaction_events) {
            tpkit::live::CompactionWriter writer(tpkit::live::compact_memory);
            std::int64_t begin_ns = 0, end_ns = 0;
            ASSERT_TRUE(writer.write_and_wait(begin_ns, end_ns));
        }
        status = run.stop(SIGINT);
    } else {
        status = run.wait(20s);
    }
    ASSERT_EQ(status, 0) << run.stderr_text();
    EXPECT_EQ(unexpected_stderr(spec, run.stderr_text()), "");
    const auto& lines = run.lines();
    ASSERT_FALSE(lines.empty());
    EXPECT_FALSE(run.ended_mid_line());
    constexpr std::size_t most_bad_lines_shown = 5;
    std::size_t bad = 0;
    std::set<std::string> types;
    for (std::size_t i = 0; i < lines.size() && bad < most_bad_lines_shown; i++) {
        std::string problem = tpkit::live::json_object_problem(lines[i]);
        if (problem.empty())
            problem = json_schema().problem(spec.name, lines[i]);
        if (problem.empty())
            types.insert(tpkit::live::parse_flat_json(lines[i])["type"]);
        else
            bad++;
        EXPECT_EQ(problem, "") << "line " << i + 1 << ": " << lines[i];
    }
    if (spec.streaming) {
        ASSERT_GE(lines.size(), 2u) << "no event line"; // an event, then the "lost" line
        EXPECT_TRUE(types.count("event")) << "no event line";
        EXPECT_TRUE(std::regex_match(lines.back(),
                                     std::regex(R"(\{"type":"lost","lost_events":[0-9]+\})")))
            << lines.back();
    } else if (spec.kind == Kind::tracer) {
        EXPECT_TRUE(types.count("hist") || types.count("count")) << "no hist or count line";
    }
}

INSTANTIATE_TEST_SUITE_P(CrossTool, LiveTool,
                         testing::ValuesIn(tools_of_kind({Kind::lister, Kind::tracer})), param_name);

// ---- tools that attach BPF programs ----

class TracingTool : public testing::TestWithParam<std::string> {
protected:
    // Runs the tool with its minimal arguments (and --duration 0.5 when sig is 0) until attached, ends it
    // with sig (or lets the duration expire): exit 0, and the programs it held are unloaded.
    void expect_clean_end(int sig)
    {
        TPKIT_REQUIRE_LIVE();
        REQUIRE_SPEC(GetParam());
        ToolRun run(tool_argv(spec, sig ? std::vector<std::string>{}
                                         : std::vector<std::string>{"--duration", "0.5"}));
        ASSERT_TRUE(run.wait_until_attached(spec.links, 20s)) << run.stderr_text();
        // By ID: someone else may be running the same tool, with programs of the same names.
        auto held = tpkit::live::programs_held_by(run.pid());
        std::vector<std::string> names;
        for (const auto& p : held)
            names.push_back(p.name);
        std::sort(names.begin(), names.end());
        auto expected = spec.programs;
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(names, expected);
        int status = sig ? run.stop(sig) : run.wait(10s);
        EXPECT_EQ(status, 0) << run.stderr_text();
        EXPECT_EQ(unexpected_stderr(spec, run.stderr_text()), "");
        EXPECT_TRUE(tpkit::live::wait_until_programs_unloaded(held, 3s)) << "programs left loaded";
    }
};

TEST_P(TracingTool, SigintDetachesUnloadsExitsZero) { expect_clean_end(SIGINT); }

TEST_P(TracingTool, SigtermDetachesUnloadsExitsZero) { expect_clean_end(SIGTERM); }

TEST_P(TracingTool, DurationDetachesUnloadsExitsZero) { expect_clean_end(0); }

// On a terminal (script(1) gives it one), a tool says on stderr what it traces once attached:
// "Tracing sys:event, … for 0.5 s… Ctrl-C to end.". Through pipes it says nothing (above).
TEST_P(TracingTool, OnATerminalSaysWhatItTraces)
{
    TPKIT_REQUIRE_LIVE();
    REQUIRE_SPEC(GetParam());
    int pty = posix_openpt(O_RDWR | O_NOCTTY);
    if (pty < 0)
        GTEST_SKIP() << "no pseudo-terminal here (a chroot without /dev/pts?)";
    close(pty);
    std::string command;
    for (const auto& arg : tool_argv(spec, {"--duration", "0.5"})) {
        std::string quoted;
        for (char c : arg)
            quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        command += (command.empty() ? "'" : " '") + quoted + "'";
    }
    ToolRun run({"/usr/bin/script", "--quiet", "--return", "--command", command, "/dev/null"});
    EXPECT_EQ(run.wait(tpkit::live::patient(20s)), 0) << run.stderr_text();
    const std::string prefix = "Tracing ", suffix = " for 0.5 s… Ctrl-C to end.\r";
    auto banner = std::find_if(run.lines().begin(), run.lines().end(),
                               [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
    ASSERT_NE(banner, run.lines().end()) << "no banner in: " << testing::PrintToString(run.lines());
    EXPECT_EQ(banner - run.lines().begin(), 0) << "the banner comes first";
    ASSERT_GT(banner->size(), prefix.size() + suffix.size());
    EXPECT_EQ(banner->substr(banner->size() - suffix.size()), suffix);
    // It names what is traced: "system:event", or "rawtracepoint:event".
    const std::string what =
        banner->substr(prefix.size(), banner->size() - suffix.size() - prefix.size());
    EXPECT_NE(what.find(':'), std::string::npos) << *banner;
}

TEST_P(TracingTool, CgroupOfAnotherFilesystemIsUsageError)
{
    TPKIT_REQUIRE_LIVE();
    REQUIRE_SPEC(GetParam());
    if (!spec.task_filters)
        GTEST_SKIP() << spec.name << " has no task filters";
    const std::string mount = tpkit::cgroup2_mount();
    ToolRun run(tool_argv(spec, {"--cgroup", "/tmp", "--duration", "5"}));
    // Failing before it traces, it closes --ready-fd with nothing written.
    EXPECT_FALSE(run.wait_until_attached(spec.links, 20s));
    EXPECT_EQ(run.wait(20s), 2) << run.stderr_text();
    EXPECT_EQ(run.stderr_text(),
              spec.name + ": --cgroup /tmp: not a cgroup v2 directory (" +
                  (mount.empty() ? "cgroup v2 is not mounted" : "cgroup v2 is mounted at " + mount) +
                  ")\n");
    EXPECT_TRUE(run.lines().empty());
}

// --ready-fd takes a descriptor open for writing, other than stdin, stdout and stderr.
TEST_P(TracingTool, ReadyFdOtherThanAnOpenWritableDescriptorIsUsageError)
{
    REQUIRE_SPEC(GetParam());
    const std::vector<std::pair<std::string, std::string>> cases{
        {"1", "--ready-fd: 1 is standard input, output or error"},
        {"999", "--ready-fd: 999 is not an open file descriptor"},
        {"3x", "--ready-fd: '3x' is not a file descriptor"}};
    for (const auto& [fd, problem] : cases) {
        ToolRun run(tool_argv(spec, {"--ready-fd", fd, "--duration", "5"}));
        EXPECT_EQ(run.wait(20s), 2) << run.stderr_text();
        EXPECT_NE(run.stderr_text().find(problem), std::string::npos) << run.stderr_text();
        EXPECT_TRUE(run.lines().empty());
    }
}

INSTANTIATE_TEST_SUITE_P(CrossTool, TracingTool, testing::ValuesIn(tools_of_kind({Kind::tracer})),
                         param_name);

// ---- the task filters, exactly, through forksnoop ----

namespace {

// A process that forks on request from its main thread and from a second thread, and reports
// each child's PID; `prepare` runs in it first (setuid, ...). Children exit at once.
class Forker {
public:
    struct Children {
        std::set<pid_t> by_main, by_second;
    };

    explicit Forker(const std::function<void()>& prepare = {})
    {
        int go[2], report[2];
        if (pipe2(go, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        pid_ = fork();
        if (pid_ < 0)
            throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            close(go[1]);
            close(report[0]);
            run(go[0], report[1], prepare);
        }
        close(go[0]);
        close(report[1]);
        go_fd_ = go[1];
        report_fd_ = report[0];
        Record r{};
        if (read(report_fd_, &r, sizeof(r)) != sizeof(r) || r.tag != second_thread) {
            close(go_fd_);
            close(report_fd_);
            int status = 0;
            waitpid(pid_, &status, 0);
            throw std::runtime_error("forker failed to start, status " + std::to_string(status));
        }
        second_tid_ = r.id;
    }

    ~Forker()
    {
        if (go_fd_ >= 0)
            close(go_fd_);
        close(report_fd_);
        if (!reaped_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }

    pid_t pid() const { return pid_; }
    pid_t second_tid() const { return second_tid_; }

    // The main thread forks `by_main` children, then the second thread `by_second`; then the
    // forker exits.
    Children fork_children(int by_main, int by_second)
    {
        int counts[2] = {by_main, by_second};
        if (write(go_fd_, counts, sizeof(counts)) != sizeof(counts))
            throw std::runtime_error("forker gone");
        close(go_fd_);
        go_fd_ = -1;
        Children children;
        Record r{};
        while (read(report_fd_, &r, sizeof(r)) == sizeof(r))
            (r.tag == main_thread ? children.by_main : children.by_second).insert(r.id);
        int status = 0;
        waitpid(pid_, &status, 0);
        reaped_ = true;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            throw std::runtime_error("forker failed");
        return children;
    }

private:
    enum Tag : std::int32_t { main_thread, second_thread };
    struct Record {
        std::int32_t tag;
        pid_t id;
    };

    struct Shared {
        int report_fd;
        int wake[2];
    };

    static void send(int fd, Tag tag, pid_t id)
    {
        Record r{tag, id};
        if (write(fd, &r, sizeof(r)) != sizeof(r))
            _exit(3);
    }

    static void fork_and_report(int fd, Tag tag, int n)
    {
        for (int i = 0; i < n; i++) {
            pid_t child = fork();
            if (child == 0)
                _exit(0);
            if (child < 0)
                _exit(4);
            send(fd, tag, child);
            waitpid(child, nullptr, 0);
        }
    }

    static void* second(void* arg)
    {
        auto* shared = static_cast<Shared*>(arg);
        send(shared->report_fd, second_thread, static_cast<pid_t>(syscall(SYS_gettid)));
        int n = 0;
        if (read(shared->wake[0], &n, sizeof(n)) != sizeof(n))
            _exit(5);
        fork_and_report(shared->report_fd, second_thread, n);
        return nullptr;
    }

    [[noreturn]] static void run(int go_fd, int report_fd, const std::function<void()>& prepare)
    {
        prctl(PR_SET_NAME, "tpk-forker", 0, 0, 0);
        if (prepare)
            prepare();
        Shared shared{report_fd, {}};
        pthread_t thread;
        if (pipe(shared.wake) != 0 || pthread_create(&thread, nullptr, second, &shared) != 0)
            _exit(6);
        int counts[2];
        if (read(go_fd, counts, sizeof(counts)) != sizeof(counts))
            _exit(7);
        fork_and_report(report_fd, main_thread, counts[0]);
        if (write(shared.wake[1], &counts[1], sizeof(int)) != sizeof(int))
            _exit(8);
        pthread_join(thread, nullptr);
        _exit(0);
    }

    pid_t pid_ = -1;
    pid_t second_tid_ = -1;
    int go_fd_ = -1;
    int report_fd_ = -1;
    bool reaped_ = false;
};

// One fork as forksnoop --json reports it.
struct Fork {
    pid_t parent_pid, parent_tid, child_pid;
    std::string kind;
    auto operator<=>(const Fork&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Fork& f)
{
    return os << "{" << f.parent_pid << "/" << f.parent_tid << " -> " << f.child_pid << " "
              << f.kind << "}";
}

std::set<Fork> forks_of(const ToolRun& tool)
{
    std::set<Fork> forks;
    for (const auto& line : tool.lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (!e.count("child_pid"))
            continue;
        forks.insert({std::stoi(e["parent_pid"]), std::stoi(e["parent_tid"]),
                      std::stoi(e["child_pid"]), e["kind"]});
    }
    return forks;
}

std::set<Fork> expected_forks(pid_t parent, pid_t tid, const std::set<pid_t>& children)
{
    std::set<Fork> forks;
    for (pid_t child : children)
        forks.insert({parent, tid, child, "process"});
    return forks;
}

// The forks the forker's two threads made: what forksnoop shows of one batch.
std::set<Fork> expected_forks(const Forker& forker, const Forker::Children& children)
{
    auto forks = expected_forks(forker.pid(), forker.pid(), children.by_main);
    forks.merge(expected_forks(forker.pid(), forker.second_tid(), children.by_second));
    return forks;
}

// The forks in the tool's output whose parent is one of these processes (others run meanwhile).
std::set<Fork> forks_by(const ToolRun& tool, std::initializer_list<pid_t> parents)
{
    std::set<Fork> ours;
    for (const auto& f : forks_of(tool))
        if (std::find(parents.begin(), parents.end(), f.parent_pid) != parents.end())
            ours.insert(f);
    return ours;
}

// forksnoop --json with these options, attached.
std::unique_ptr<ToolRun> forksnoop(std::vector<std::string> options)
{
    constexpr std::size_t links = 1; // sched_process_fork
    return tpkit::live::attached_json_tool("forksnoop", std::move(options), links);
}

// A cgroup v2 directory for one test, removed afterwards (its processes must be gone by then).
class TempCgroup {
public:
    TempCgroup()
    {
        std::string mount = tpkit::cgroup2_mount();
        if (mount.empty())
            return;
        path_ = mount + "/tpkit-test-" + std::to_string(getpid());
        if (mkdir(path_.c_str(), 0755) != 0)
            throw std::runtime_error("mkdir " + path_ + ": " + std::strerror(errno));
    }
    ~TempCgroup()
    {
        if (path_.empty())
            return;
        // A dead task leaves its cgroup a moment after it is reaped: tries for 2 s.
        constexpr int rmdir_attempts = 200;
        for (int i = 0; i < rmdir_attempts && rmdir(path_.c_str()) != 0 && errno == EBUSY; i++)
            std::this_thread::sleep_for(10ms);
    }
    TempCgroup(const TempCgroup&) = delete;
    TempCgroup& operator=(const TempCgroup&) = delete;

    const std::string& path() const { return path_; }

    void add(pid_t pid) const
    {
        std::ofstream procs(path_ + "/cgroup.procs");
        procs << pid << std::flush;
        if (!procs)
            throw std::runtime_error("cannot move " + std::to_string(pid) + " into " + path_);
    }

private:
    std::string path_;
};

} // namespace

TEST(TaskFilterOptions, TidKeepsOnlyThatThreadsForks)
{
    TPKIT_REQUIRE_LIVE();
    Forker forker;
    auto tool = forksnoop({"-t", std::to_string(forker.second_tid())});
    constexpr int by_main = 3, by_second = 4;
    auto children = forker.fork_children(by_main, by_second);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    // Nothing else on the system runs as that thread: the whole output is known.
    EXPECT_EQ(forks_of(*tool), expected_forks(forker.pid(), forker.second_tid(), children.by_second));
}

TEST(TaskFilterOptions, UidKeepsOnlyThatUsersForks)
{
    TPKIT_REQUIRE_LIVE();
    Forker as_root;
    Forker as_nobody([] {
        if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
            _exit(9);
    });
    auto tool = forksnoop({"-u", "65534"});
    constexpr int root_by_main = 3, nobody_by_main = 3, nobody_by_second = 2;
    auto root_children = as_root.fork_children(root_by_main, 0);
    auto nobody_children = as_nobody.fork_children(nobody_by_main, nobody_by_second);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    // Other processes may run as nobody meanwhile: only forks by ours (or by this test, which
    // made them as root) are known.
    EXPECT_EQ(forks_by(*tool, {as_root.pid(), as_nobody.pid(), getpid()}),
              expected_forks(as_nobody, nobody_children));
}

// --cpu: forks happen on the CPU their parent runs on; one forker is pinned to each CPU.
TEST(TaskFilterOptions, CpuKeepsOnlyForksOnThatCpu)
{
    TPKIT_REQUIRE_LIVE();
    if (get_nprocs() < 2)
        GTEST_SKIP() << "one CPU";
    auto pinned_to = [](int cpu) {
        return [cpu] {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            if (sched_setaffinity(0, sizeof(set), &set) != 0)
                _exit(9);
        };
    };
    Forker on_0(pinned_to(0)), on_1(pinned_to(1));
    auto tool = forksnoop({"--cpu", "1"});
    constexpr int on_0_by_main = 3, on_0_by_second = 1, on_1_by_main = 2, on_1_by_second = 2;
    auto children_0 = on_0.fork_children(on_0_by_main, on_0_by_second);
    auto children_1 = on_1.fork_children(on_1_by_main, on_1_by_second);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    // Other processes fork on CPU 1 meanwhile: only forks by ours are known.
    EXPECT_EQ(forks_by(*tool, {on_0.pid(), on_1.pid()}), expected_forks(on_1, children_1));
}

TEST(TaskFilterOptions, CgroupKeepsOnlyForksMadeInIt)
{
    TPKIT_REQUIRE_LIVE();
    TempCgroup cgroup;
    if (cgroup.path().empty())
        GTEST_SKIP() << "cgroup v2 is not mounted";
    Forker outside;
    Forker inside;
    cgroup.add(inside.pid());
    auto tool = forksnoop({"--cgroup", cgroup.path()});
    constexpr int outside_by_main = 3, outside_by_second = 1;
    constexpr int inside_by_main = 3, inside_by_second = 2;
    auto outside_children = outside.fork_children(outside_by_main, outside_by_second);
    auto inside_children = inside.fork_children(inside_by_main, inside_by_second);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    // Only the inside forker ever ran in the new cgroup: the whole output is known.
    EXPECT_EQ(forks_of(*tool), expected_forks(inside, inside_children));
}

// ---- --clock: which clock "time_ns" is in ----

namespace {

std::int64_t clock_now(clockid_t id)
{
    timespec ts{};
    clock_gettime(id, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct ClockCase {
    std::vector<std::string> option; // none: the default
    clockid_t id;
    // Wall time is the kernel's monotonic stamp plus an offset measured at the start, which NTP
    // may slew from CLOCK_REALTIME by up to 500 ppm while the test runs: a millisecond allowed.
    std::int64_t slack_ns;
};

std::string clock_case_name(const testing::TestParamInfo<ClockCase>& info)
{
    return info.param.option.empty() ? "default" : info.param.option.back();
}

class ClockOption : public testing::TestWithParam<ClockCase> {};

} // namespace

TEST_P(ClockOption, EventTimeIsInIt)
{
    TPKIT_REQUIRE_LIVE();
    const ClockCase& c = GetParam();
    auto tool = forksnoop(c.option);
    const std::int64_t before = clock_now(c.id);
    constexpr int children = 1, threads = 0;
    auto batch = tpkit::live::run_fork_batch("tpk-clock", children, threads);
    const std::int64_t after = clock_now(c.id);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    std::size_t found = 0;
    for (const auto& line : tool->lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        if (e["type"] != "event" || e["child_pid"] != std::to_string(batch.children.at(0)))
            continue;
        found++;
        const std::int64_t t = std::stoll(e["time_ns"]);
        EXPECT_GE(t, before - c.slack_ns) << line;
        EXPECT_LE(t, after + c.slack_ns) << line;
    }
    EXPECT_EQ(found, 1u); // the child's fork
}

TEST_P(ClockOption, IntervalEndIsInIt)
{
    TPKIT_REQUIRE_LIVE();
    const ClockCase& c = GetParam();
    std::vector<std::string> options{"-p", std::to_string(getpid())};
    options.insert(options.end(), c.option.begin(), c.option.end());
    constexpr std::size_t links = 1; // sys_enter
    auto tool = tpkit::live::attached_json_tool("syscount", options, links);
    const std::int64_t before = clock_now(c.id);
    syscall(SYS_getppid);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text(); // prints at the stop
    const std::int64_t after = clock_now(c.id);
    std::size_t rows = 0;
    for (const auto& line : tool->lines()) {
        auto e = tpkit::live::parse_flat_json(line);
        ASSERT_EQ(e["type"], "count") << line;
        rows++;
        const std::int64_t t = std::stoll(e["time_ns"]);
        EXPECT_GE(t, before) << line;
        EXPECT_LE(t, after) << line;
    }
    EXPECT_GE(rows, 1u); // getppid at least
}

INSTANTIATE_TEST_SUITE_P(CrossTool, ClockOption,
                         testing::Values(ClockCase{{}, CLOCK_REALTIME, 1'000'000},
                                         ClockCase{{"--clock", "wall"}, CLOCK_REALTIME, 1'000'000},
                                         ClockCase{{"--clock", "mono"}, CLOCK_MONOTONIC, 0},
                                         ClockCase{{"--clock", "boot"}, CLOCK_BOOTTIME, 0}),
                         clock_case_name);

TEST(ClockOptionUsage, UnknownClockIsUsageError)
{
    for (const char* clock : {"local", "1"}) { // names only: not the enum's numbers
        ToolRun run({tpkit::live::tool_path("forksnoop"), "--clock", clock});
        EXPECT_EQ(run.wait(10s), 2) << run.stderr_text();
        EXPECT_EQ(run.stderr_text(), std::string("forksnoop: --clock: '") + clock +
                                         "' is not wall, mono or boot (see --help)\n");
        EXPECT_TRUE(run.lines().empty());
    }
}
