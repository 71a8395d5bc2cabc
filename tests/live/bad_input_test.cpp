// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The bad-input table: what a user can get wrong or the system can lack, across the tools. Each
// case has its exit code (tpkit(8), docs/man/tpkit.8), at most one line on stderr holding its key words,
// no output on stdout when it fails, and no BPF program of ours left loaded afterwards.
#include "live.hpp"
#include "tool_run.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;
namespace fs = std::filesystem;

namespace {

// How a case is run, beyond its command line.
enum class Stdout { read, closed, full, never_read };

struct Case {
    std::string what;
    std::vector<std::string> argv;
    int exit_code;
    // Words the one line on stderr must hold; none: stderr must be empty.
    std::vector<std::string> words;
    Stdout out = Stdout::read;
};

std::vector<std::string> tool(const std::string& name, std::vector<std::string> args)
{
    args.insert(args.begin(), tpkit::live::tool_path(name));
    return args;
}

// COMMAND under another program that sets up its conditions (setpriv, prlimit, unshare).
std::vector<std::string> under(std::vector<std::string> wrapper, const std::vector<std::string>& command)
{
    wrapper.insert(wrapper.end(), command.begin(), command.end());
    return wrapper;
}

const std::vector<std::string> nobody_setpriv{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                         "--clear-groups", "--inh-caps=-all"};
const std::vector<std::string> root_without_caps{"/usr/bin/setpriv", "--inh-caps=-all",
                                                 "--bounding-set=-all"};
// CAP_BPF and CAP_PERFMON only, kept across exec as ambient capabilities.
const std::vector<std::string> bpf_perfmon_only{"/usr/bin/setpriv", "--inh-caps=-all,+bpf,+perfmon",
                                                "--ambient-caps=-all,+bpf,+perfmon",
                                                "--bounding-set=-all,+bpf,+perfmon"};
const std::vector<std::string> nobody_bpf_perfmon{"/usr/bin/setpriv", "--reuid=65534",
                                                  "--regid=65534", "--clear-groups",
                                                  "--inh-caps=-all,+bpf,+perfmon",
                                                  "--ambient-caps=-all,+bpf,+perfmon"};

std::vector<std::string> with_prlimit(const std::string& limit, const std::vector<std::string>& command)
{
    return under({"/usr/bin/prlimit", limit}, command);
}

// COMMAND in a mount namespace of its own where SETUP (shell) ran first. Its mounts are made
// private before SETUP, so that nothing SETUP unmounts is unmounted outside: all at once from /
// where / is a mount point, else one by one (under chroot, / may be none, and unshare's own
// --propagation private then fails); SETUP does not run unless each one could be.
std::vector<std::string> in_mount_namespace(const std::string& setup,
                                            const std::vector<std::string>& command)
{
    const std::string private_mounts =
        "mount --make-rprivate / 2>/dev/null || "
        "for m in $(awk '{ print $5 }' /proc/self/mountinfo); do mount --make-private \"$m\" || exit 97; done";
    return under({"/usr/bin/unshare", "--mount", "--propagation", "unchanged", "/bin/sh", "-c",
                  "{ " + private_mounts + "; } && " + setup + " && exec \"$@\"", "sh"},
                 command);
}

const std::string unmount_tracefs =
    "umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null; true";

// A process ID no process has: a child's, once reaped.
pid_t dead_pid()
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, nullptr, 0);
    return pid;
}

// Files for tpgen: a format file with a bad offset, a truncated tarball, a truncated and a
// garbage BTF.
struct TpgenInputs {
    fs::path dir = fs::temp_directory_path() / fmt::format("tpkit-bad-input-{}", getpid());
    fs::path formats = dir / "formats";
    fs::path truncated_tarball = dir / "truncated.tar.gz";
    fs::path truncated_btf = dir / "truncated.btf.gz";
    fs::path garbage_btf = dir / "garbage.btf";

    TpgenInputs()
    {
        fs::create_directories(formats / "sys" / "ev");
        std::ofstream(formats / "sys" / "ev" / "format")
            << "name: ev\nID: 1\nformat:\n\tfield:int x;\toffset:zz;\tsize:4;\tsigned:1;\n";
        copy_prefix(fs::path(TPKIT_TEST_DATA) / "formats" / "linux-6.18.tar.gz", truncated_tarball, 3000);
        copy_prefix(reference_btf(), truncated_btf, 5000);
        std::ofstream garbage(garbage_btf, std::ios::binary);
        for (int i = 0; i < 4096; i++)
            garbage.put(static_cast<char>(i * 7919 % 251));
    }
    ~TpgenInputs()
    {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }

    static std::string reference_btf() { return std::string(TPKIT_TEST_DATA) + "/btf/linux-6.18.btf.gz"; }
    static std::string reference_formats()
    {
        return std::string(TPKIT_TEST_DATA) + "/formats/linux-6.18.tar.gz";
    }

    static void copy_prefix(const fs::path& from, const fs::path& to, std::size_t bytes)
    {
        std::ifstream in(from, std::ios::binary);
        std::string data(bytes, '\0');
        in.read(data.data(), static_cast<std::streamsize>(bytes));
        std::ofstream(to, std::ios::binary).write(data.data(), in.gcount());
    }
};

// The descriptors past stdin, stdout and stderr that a tool started from here inherits (a test
// runner may pass some down): what an RLIMIT_NOFILE case must leave room for.
// The lowest descriptor a child of this process has free once exec'd: those open here without
// close-on-exec are inherited. RLIMIT_NOFILE bounds descriptor numbers, not their count: a limit
// of this plus one leaves the child exactly one, whatever it inherits above it.
int first_descriptor_free_after_exec()
{
    for (int fd = 3;; fd++) {
        const int flags = fcntl(fd, F_GETFD);
        if (flags < 0 || (flags & FD_CLOEXEC))
            return fd;
    }
}

std::vector<Case> cases(const TpgenInputs& files, pid_t dead, pid_t thread)
{
    const std::string dead_text = std::to_string(dead), thread_text = std::to_string(thread);
    const std::vector<std::string> fork_events{"-d", "0.3"};
    const std::string switches = "sched:sched_switch";
    return {
        // Usage: exit 2.
        {"string field as a histogram value", tool("tphist", {switches, "prev_comm", "-d", "1"}), 2,
         {"prev_comm", "not a number"}},
        {"unbalanced '('", tool("tpsnoop", {switches, "--filter", "(prev_pid == 1", "-d", "1"}), 2,
         {"filter", "missing ')'"}},
        {"unbalanced ')'", tool("tpcount", {switches, "--filter", "prev_pid == 1)", "-d", "1"}), 2,
         {"filter", "unbalanced ')'"}},
        {"filter ending in &&", tool("tpsnoop", {switches, "--filter", "prev_pid == 1 &&", "-d", "1"}), 2,
         {"filter", "expected a field name"}},
        {"unterminated string", tool("tphist", {switches, "prev_pid", "--filter", "prev_comm == \"ab", "-d", "1"}), 2,
         {"filter", "missing closing quote"}},
        {"2^64 in a filter", tool("tpsnoop", {switches, "--filter", "prev_pid == 18446744073709551616", "-d", "1"}), 2,
         {"invalid number", "18446744073709551616"}},
        {"20 digits in a filter", tool("tphist", {switches, "prev_prio", "--filter", "prev_state > 99999999999999999999", "-d", "1"}), 2,
         {"invalid number"}},
        {"negative number for an unsigned field", tool("tpcount", {"syscalls:sys_enter_read", "--filter", "count == -1", "-d", "1"}), 2,
         {"negative number", "count"}},
        {"-p past 64 bits", tool("forksnoop", {"-p", "18446744073709551616"}), 2, {"--pid", "18446744073709551616"}},
        {"-t past 64 bits", tool("opensnoop", {"-t", "99999999999999999999"}), 2, {"--tid"}},
        {"-u past 32 bits", tool("execsnoop", {"-u", "4294967296"}), 2, {"--uid", "4294967296"}},
        {"interval 0", tool("netrxlen", {"0"}), 2, {"interval", "'0'"}},
        {"count 0", tool("runqlat", {"1", "0"}), 2, {"count", "'0'"}},
        {"interval not a number", tool("biolatency", {"abc"}), 2, {"interval", "'abc'"}},
        {"negative duration", tool("tpcount", {switches, "-d", "-1"}), 2, {"--duration", "'-1'"}},
        {"duration past a double", tool("tpsnoop", {switches, "-d", "1e400"}), 2, {"--duration", "1e400"}},
        {"empty --comm", tool("forksnoop", {"--comm", ""}), 2, {"--comm: an empty value"}},
        {"long --comm", tool("execsnoop", {"--comm", "a-name-longer-than-15"}), 2, {"--comm", "1 to 15"}},
        {"--loglinear 9", tool("tphist", {switches, "prev_pid", "--loglinear", "9"}), 2, {"--loglinear", "9"}},
        {"--max-keys 0", tool("tpcount", {switches, "--max-keys", "0"}), 2, {"--max-keys"}},
        {"port 70000", tool("tcpconnect", {"-P", "70000"}), 2, {"--port", "70000"}},
        {"no event", tool("tpsnoop", {"-d", "1"}), 2, {"event is required"}},
        {"tpgen: not SYSTEM:EVENT", tool("tpgen", {"nocolon"}), 2, {"nocolon", "SYSTEM:EVENT"}},

        // Unknown targets: exit 4.
        {"unknown event", tool("tpsnoop", {"sched:no_such_event", "-d", "1"}), 4, {"unknown tracepoint", "sched:no_such_event"}},
        {"unknown system", tool("tpcount", {"nosys:foo", "-d", "1"}), 4, {"unknown tracepoint", "nosys:foo"}},
        {"misspelt event", tool("tpcount", {"sched:sched_swich", "-d", "1"}), 4,
         {"unknown tracepoint 'sched:sched_swich' (did you mean sched:sched_switch?)"}},
        {"misspelt system", tool("tpsnoop", {"syscall:sys_enter_read", "-d", "1"}), 4,
         {"did you mean syscalls:sys_enter_read?"}},
        {"misspelt tool", tool("tpkit", {"runqlta"}), 2, {"no tool named 'runqlta', did you mean runqlat?"}},
        {"unknown histogram field", tool("tphist", {switches, "no_such_field", "-d", "1"}), 4, {"no field 'no_such_field'"}},
        {"unknown --by field", tool("tpcount", {switches, "--by", "no_such_field", "-d", "1"}), 4, {"no field 'no_such_field'"}},
        {"unknown -f field", tool("tpsnoop", {switches, "-f", "no_such_field", "-d", "1"}), 4, {"no field 'no_such_field'"}},
        {"unknown filter field", tool("tpsnoop", {switches, "--filter", "nope == 1", "-d", "1"}), 2, {"unknown field 'nope'"}},
        {"glob matching nothing", tool("tpsnoop", {"nosuchsys*:*", "-d", "1"}), 4, {"no tracepoint matches", "nosuchsys*:*"}},
        {"event glob matching nothing", tool("tpcount", {"sched:zzz*", "-d", "1"}), 4, {"no tracepoint matches"}},
        {"tplist glob matching nothing", tool("tplist", {"sched:zzz*"}), 4, {"no tracepoint matches"}},
        {"dead pid", tool("forksnoop", {"-p", dead_text, "-d", "1"}), 4, {"no process with PID " + dead_text}},
        {"dead pid, raw tracepoints", tool("syscount", {"-p", dead_text, "-d", "1"}), 4, {"no process with PID " + dead_text}},
        {"dead pid, engine", tool("tpsnoop", {switches, "-p", dead_text, "-d", "1"}), 4, {"no process with PID"}},
        {"dead tid", tool("opensnoop", {"-t", dead_text, "-d", "1"}), 4, {"no thread with TID " + dead_text}},
        {"a thread's ID as -p", tool("execsnoop", {"-p", thread_text, "-d", "1"}), 4,
         {thread_text + " is a thread of process", "-t " + thread_text}},
        {"unknown disk", tool("biolatency", {"-d", "tpk-no-such-disk", "1", "1"}), 4, {"unknown disk", "tpk-no-such-disk"}},

        // Echoed input stays one short line: escaped, and cut past 512 bytes.
        {"an event name holding a newline", tool("tpcount", {"sched:sched_\nswitch", "-d", "0.3"}), 4,
         {"'sched:sched_\\nswitch'"}},
        {"a 100 KB event name", tool("tpcount", {"sched:" + std::string(100000, 'x'), "-d", "0.3"}), 4,
         {"unknown tracepoint 'sched:xxx", "xxx... (99", " more bytes)"}},
        // Numbers that every range check lets through, and wrapped unsigned values.
        {"NaN as a minimum", tool("biosnoop", {"-m", "nan", "-d", "0.3"}), 2, {"-m", "'nan' is not a finite number"}},
        {"NaN as a positional duration", tool("offcputime", {"nan"}), 2, {"duration", "'nan' is not a finite number"}},
        {"infinity as an interval", tool("runqlat", {"inf", "1"}), 2, {"interval", "'inf' is more than 1e9 seconds"}},
        {"-1 as an unsigned minimum", tool("offcputime", {"-m", "-1", "-d", "0.3"}), 2, {"'-1' is out of range"}},
        {"2^64 as an unsigned minimum", tool("offcputime", {"-m", "18446744073709551616", "-d", "0.3"}), 2,
         {"'18446744073709551616' is out of range"}},
        {"-1 as a CPU", tool("tpcount", {switches, "--cpu", "-1", "-d", "0.3"}), 2, {"--cpu: '-1' is "}},
        {"a word as a CPU", tool("tpcount", {switches, "--cpu", "first", "-d", "0.3"}), 2,
         {"--cpu: 'first' is not a whole number"}},
        {"only commas for a list", tool("tpsnoop", {switches, "-f", ",", "-d", "0.3"}), 2, {"-f: an empty value (',')"}},
        {"an unknown option before a value", tool("netrxlen", {"--cgroup", "/"}), 2,
         {"not expected: --cgroup"}},
        {"a duration past 1e9 seconds", tool("tpcount", {switches, "-d", "2e9"}), 2, {"'2e9' is more than 1e9 seconds"}},

        // tpgen's inputs: missing (4), unreadable (4), malformed (1).
        {"tpgen: no formats there", tool("tpgen", {"--formats", "/nonexistent", switches}), 4, {"no format files", "/nonexistent"}},
        {"tpgen: malformed format file", tool("tpgen", {"--formats", files.formats, "--btf", files.reference_btf(), "sys:ev"}), 1,
         {"format:4", "bad offset 'zz'"}},
        {"tpgen: truncated tarball", tool("tpgen", {"--formats", files.truncated_tarball, "--btf", files.reference_btf(), switches}), 4,
         {"truncated"}},
        {"tpgen: garbage BTF", tool("tpgen", {"--formats", files.reference_formats(), "--btf", files.garbage_btf, switches}), 4,
         {"is not BTF"}},
        {"tpgen: truncated BTF", tool("tpgen", {"--formats", files.reference_formats(), "--btf", files.truncated_btf, switches}), 4,
         {"truncated BTF"}},
        {"tpgen: missing BTF", tool("tpgen", {"--formats", files.reference_formats(), "--btf", "/nonexistent.btf", switches}), 4,
         {"cannot read BTF", "No such file"}},
        {"tpgen --raw: garbage BTF", tool("tpgen", {"--raw", "--btf", files.garbage_btf, switches}), 4, {"is not BTF"}},
        {"tpgen: unknown event", tool("tpgen", {"--formats", files.reference_formats(), "--btf", files.reference_btf(), "sched:nope"}), 4,
         {"no event matches", "sched:nope"}},

        // Privileges: 3, or 0 where CAP_BPF + CAP_PERFMON are enough (tpkit(8), PRIVILEGES).
        {"no privileges", under(nobody_setpriv, tool("forksnoop", fork_events)), 3, {"tracefs", "root"}},
        {"no privileges, raw tracepoints", under(nobody_setpriv, tool("syscount", fork_events)), 3, {"CAP_BPF"}},
        {"root without capabilities", under(root_without_caps, tool("forksnoop", fork_events)), 3, {"CAP_BPF", "CAP_PERFMON"}},
        {"CAP_BPF+CAP_PERFMON as root", under(bpf_perfmon_only, tool("forksnoop", fork_events)), 0, {}},
        {"CAP_BPF+CAP_PERFMON as nobody, tracefs root's", under(nobody_bpf_perfmon, tool("forksnoop", fork_events)), 3,
         {"tracefs", "CAP_DAC_READ_SEARCH"}},
        {"CAP_BPF+CAP_PERFMON as nobody, raw tracepoints", under(nobody_bpf_perfmon, tool("syscount", fork_events)), 0, {}},

        // Limits.
        {"RLIMIT_MEMLOCK 0", with_prlimit("--memlock=0:0", tool("forksnoop", fork_events)), 0, {}},
        {"RLIMIT_MEMLOCK 0, engine", with_prlimit("--memlock=0:0", tool("tpcount", {switches, "-d", "0.3"})), 0, {}},
        {"RLIMIT_NOFILE below a glob's needs", with_prlimit("--nofile=12:12", tool("tpsnoop", {"syscalls:sys_enter_*read*", "-d", "1"})), 1,
         {"open files", "the hard limit is 12"}},
        // One descriptor free (the dynamic loader needs it): tracefs cannot be read for a
        // limit, not for a lack of privileges.
        {"RLIMIT_NOFILE while reading tracefs",
         with_prlimit(fmt::format("--nofile={0}:{0}", first_descriptor_free_after_exec() + 1), tool("tplist", {})), 1,
         {"cannot read", "Too many open files"}},
        // Room for a few descriptors the test runner may pass down, far below forksnoop's ~35.
        {"RLIMIT_NOFILE below a tool's needs", with_prlimit("--nofile=16:16", tool("forksnoop", fork_events)), 1,
         {"BPF programs of forksnoop need", "the hard limit is 16"}},

        // Output.
        {"stdout closed", tool("tpsnoop", {switches, "-d", "1"}), 0, {}, Stdout::closed},
        {"stdout closed, streaming tool", tool("forksnoop", fork_events), 0, {}, Stdout::closed},
        {"stdout closed, --help", tool("tpgen", {"--help"}), 0, {}, Stdout::closed},
        {"stdout full", tool("tpsnoop", {switches, "-d", "1"}), 1, {"cannot write to stdout", "No space left"}, Stdout::full},
        {"stdout full, tplist", tool("tplist", {}), 1, {"cannot write to stdout", "No space left"}, Stdout::full},
        {"stdout full, --help", tool("forksnoop", {"--help"}), 1, {"cannot write to stdout"}, Stdout::full},
        // Short enough that the ring buffer does not fill too (a second line would count its drops).
        {"stdout never read", tool("tpsnoop", {switches, "-d", "0.5"}), 0, {"lines of output not written", "not being read"},
         Stdout::never_read},

        // tracefs.
        {"tracefs not mounted", in_mount_namespace(unmount_tracefs, tool("forksnoop", fork_events)), 0,
         {"mounted tracefs"}},
        {"tracefs not mounted, cannot be", in_mount_namespace(unmount_tracefs + " && mount -t tmpfs -o ro none /sys/kernel",
                                                               tool("forksnoop", fork_events)), 3,
         {"tracefs"}},
        {"tracefs read-only", in_mount_namespace("mount -o remount,bind,ro /sys/kernel/tracing",
                                                 tool("tpsnoop", {switches, "-d", "0.3"})), 0, {}},
    };
}

// Runs one case; its stderr.
void run_case(const Case& c)
{
    std::vector<std::string> argv = c.argv;
    if (c.out == Stdout::closed || c.out == Stdout::full)
        argv = under({"/bin/sh", "-c", c.out == Stdout::closed ? "exec \"$@\" >&-" : "exec \"$@\" >/dev/full", "sh"},
                     argv);
    const auto before = tpkit::live::loaded_program_ids();
    ToolRun run(argv);
    int status;
    if (c.out == Stdout::never_read) {
        run.shrink_stdout_pipe();
        status = run.wait_without_reading_stdout(30s);
    } else {
        status = run.wait(30s);
    }
    const std::string& err = run.stderr_text();
    EXPECT_EQ(status, c.exit_code) << err;
    if (c.words.empty()) {
        EXPECT_EQ(err, "");
    } else {
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_LT(err.size(), 1024u) << err;
        EXPECT_TRUE(!err.empty() && err.back() == '\n') << err;
        for (const auto& word : c.words)
            EXPECT_NE(err.find(word), std::string::npos) << "'" << word << "' not in: " << err;
    }
    if (c.exit_code != 0) {
        EXPECT_TRUE(run.lines().empty()) << "stdout: " << run.lines().front();
    }
    tpkit::live::expect_none_left_behind(before);
}

} // namespace

TEST(BadInput, EveryCaseExitsWithItsCodeAndOneLineAndLeavesNothingLoaded)
{
    TPKIT_REQUIRE_LIVE();
    TpgenInputs files;
    // A thread that is not its process's leader, for "-p TID".
    std::promise<pid_t> thread_id;
    std::promise<void> done;
    std::thread thread([&] {
        thread_id.set_value(static_cast<pid_t>(syscall(SYS_gettid)));
        done.get_future().wait();
    });
    const auto table = cases(files, dead_pid(), thread_id.get_future().get());
    EXPECT_GE(table.size(), 40u);
    for (const Case& c : table) {
        SCOPED_TRACE(c.what);
        run_case(c);
    }
    done.set_value();
    thread.join();
}
