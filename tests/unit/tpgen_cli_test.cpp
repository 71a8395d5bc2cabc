// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The tpgen tool itself, run as a process: its command line and exit codes as every tool's, its
// output never silently lost or left half-written, and nothing left behind when a signal stops it.
#include "reference_data.hpp"
#include "scratch.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

using tpkit::test::data_dir;
using tpkit::test::slurp;

fs::path scratch() { return tpkit::test::scratch_dir("tpgen-cli-test"); }

std::vector<std::string> reference_6_18()
{
    return {"--formats", (data_dir / "formats/linux-6.18.tar.gz").string(), "--btf",
            (data_dir / "btf/linux-6.18.btf.gz").string()};
}

struct Spawn {
    std::vector<std::string> args;
    std::string stdout_path = "/dev/null"; // "" leaves it to the caller's fd below
    int stdout_fd = -1;
    rlim_t max_file_size = RLIM_INFINITY; // RLIMIT_FSIZE, with SIGXFSZ ignored: EFBIG instead
    std::string tmpdir;
};

// Starts tpgen with default signal dispositions and mask; its stderr goes to ERR_PATH.
pid_t spawn(const Spawn& s, const fs::path& err_path)
{
    std::vector<std::string> argv = {TPKIT_TPGEN};
    argv.insert(argv.end(), s.args.begin(), s.args.end());
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    std::vector<char*> cargv;
    for (auto& a : argv)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE})
        signal(sig, SIG_DFL);
    if (s.max_file_size != RLIM_INFINITY) {
        signal(SIGXFSZ, SIG_IGN);
        rlimit limit{s.max_file_size, s.max_file_size};
        setrlimit(RLIMIT_FSIZE, &limit);
    }
    if (!s.tmpdir.empty())
        setenv("TMPDIR", s.tmpdir.c_str(), 1);
    int in = open("/dev/null", O_RDONLY);
    int out = s.stdout_fd >= 0 ? s.stdout_fd : open(s.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execv(cargv[0], cargv.data());
    _exit(127);
}

struct Result {
    int code = -1;   // exit status, or -1 when killed
    int signal = 0;  // the signal that ended it
    std::string out; // stdout, when it went to a file
    std::string err;
};

Result run(const Spawn& s)
{
    static int n = 0;
    fs::path err = scratch() / ("stderr-" + std::to_string(n++));
    pid_t pid = spawn(s, err);
    int status = 0;
    waitpid(pid, &status, 0);
    Result r;
    if (WIFEXITED(status))
        r.code = WEXITSTATUS(status);
    else
        r.signal = WTERMSIG(status);
    if (s.stdout_fd < 0 && s.stdout_path != "/dev/null" && s.stdout_path != "/dev/full")
        r.out = slurp(s.stdout_path);
    r.err = slurp(err);
    return r;
}

Result run(std::vector<std::string> args, std::string stdout_path = "")
{
    static int n = 0;
    Spawn s;
    s.args = std::move(args);
    s.stdout_path = stdout_path.empty() ? (scratch() / ("stdout-" + std::to_string(n++))).string()
                                        : stdout_path;
    return run(s);
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// One line "tpgen: ...": what every tool's errors look like.
::testing::AssertionResult one_line(const std::string& err)
{
    if (err.rfind("tpgen: ", 0) == 0 && !err.empty() && err.back() == '\n' &&
        err.find('\n') == err.size() - 1)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "not one 'tpgen: ' line: [" << err << "]";
}

std::vector<std::string> files_in(const fs::path& dir)
{
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

TEST(TpgenCli, UsageErrorsAreOneLineWithExit2AndHelpEndsWithExamples)
{
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    for (const Case& c : std::vector<Case>{
             {{"--bogus", "sched:x"}, "tpgen: The following argument was not expected: --bogus (see --help)\n"},
             {{}, "tpgen: events is required (see --help)\n"},
             {{"--formats"}, ""},
             {{"--flavour", "x", "sched:x"}, "tpgen: --flavour: 'x' is not NAME=FORMATS[,BTF] (see --help)\n"},
             {{"--flavour", "int=a", "sched:x"},
              "tpgen: --flavour: bad flavour name 'int': a C keyword (see --help)\n"},
             {{"--formats", "a", "--flavour", "a=b", "sched:x"}, ""},
         }) {
        std::string joined;
        for (const auto& a : c.args)
            joined += a + " ";
        SCOPED_TRACE(joined);
        Result r = run(c.args);
        EXPECT_EQ(r.code, 2);
        EXPECT_TRUE(one_line(r.err));
        EXPECT_NE(r.err.find("(see --help)\n"), std::string::npos) << r.err;
        if (!c.message.empty()) {
            EXPECT_EQ(r.err, c.message);
        }
        EXPECT_EQ(r.out, "");
    }

    Result raw = run(with(reference_6_18(), {"--raw", "--flavour", "a=x", "--flavour", "b=y", "sched:x"}));
    EXPECT_EQ(raw.code, 2);
    EXPECT_TRUE(one_line(raw.err));

    Result help = run({"--help"});
    EXPECT_EQ(help.code, 0);
    EXPECT_EQ(help.err, "");
    auto examples = help.out.find("\nEXAMPLES:\n");
    ASSERT_NE(examples, std::string::npos) << help.out;
    EXPECT_NE(help.out.find("tpgen --raw sched:sched_process_fork", examples), std::string::npos);
    EXPECT_EQ(help.out.find_first_not_of(" \n", help.out.find("# struct task_struct *parent, *child")
                                                    + 36),
              std::string::npos)
        << "the examples are not the end of --help:\n"
        << help.out;
}

TEST(TpgenCli, RuntimeErrorsAreOneLineWithTheirExitCodes)
{
    Result unknown = run(with(reference_6_18(), {"sched:no_such_event"}));
    EXPECT_EQ(unknown.code, 4);
    EXPECT_EQ(unknown.err, "tpgen: no event matches 'sched:no_such_event'\n");

    // ftrace:function has a format file but no raw tracepoint: unknown as a raw tracepoint.
    Result no_raw = run(with(reference_6_18(), {"--raw", "ftrace:function"}));
    EXPECT_EQ(no_raw.code, 4);
    EXPECT_EQ(no_raw.err, "tpgen: ftrace:function: no raw tracepoint: BTF has no btf_trace_function "
                          "(syscalls:* events come from the raw tracepoints sys_enter/sys_exit)\n");

    fs::path garbage = scratch() / "garbage.tar.gz";
    std::ofstream(garbage) << "garbage\n";
    Result tar = run({"--formats", garbage.string(), "--btf", (data_dir / "btf/linux-6.18.btf.gz").string(),
                      "sched:x"});
    EXPECT_EQ(tar.code, 4);
    EXPECT_EQ(tar.err, "tpgen: cannot read format files from " + garbage.string() + ": not a tar archive\n");

    Result zero = run({"--formats", (data_dir / "formats/linux-6.18.tar.gz").string(), "--btf", "/dev/zero",
                       "sched:sched_process_fork"});
    EXPECT_EQ(zero.code, 4);
    EXPECT_EQ(zero.err, "tpgen: /dev/zero is not BTF: neither raw BTF, gzip of it, nor an ELF object\n");
}

TEST(TpgenCli, StdoutWriteErrorsFail)
{
    Result full = run(with(reference_6_18(), {"sched:sched_process_fork"}), "/dev/full");
    EXPECT_EQ(full.code, 1);
    EXPECT_EQ(full.err, "tpgen: cannot write to stdout: No space left on device\n");

    Result ok = run(with(reference_6_18(), {"sched:sched_process_fork"}));
    EXPECT_EQ(ok.code, 0) << ok.err;
    EXPECT_EQ(ok.out, slurp(data_dir / "golden/tpgen/sched_process_fork-6.18.h"));
}

TEST(TpgenCli, OutputFileIsReplacedOnlyWhenComplete)
{
    fs::path dir = scratch() / "out";
    fs::create_directories(dir);
    fs::path file = dir / "fork.h";
    std::string golden = slurp(data_dir / "golden/tpgen/sched_process_fork-6.18.h");

    Result ok = run(with(reference_6_18(), {"sched:sched_process_fork", "-o", file.string()}));
    EXPECT_EQ(ok.code, 0) << ok.err;
    EXPECT_EQ(slurp(file), golden);
    mode_t mask = umask(0);
    umask(mask);
    EXPECT_EQ(fs::status(file).permissions(), fs::perms(0666 & ~mask));
    EXPECT_EQ(files_in(dir), std::vector<std::string>{"fork.h"});

    // A write that fails half-way (EFBIG past RLIMIT_FSIZE, as ENOSPC would on a full disk):
    // the old file stays whole and no temporary remains.
    std::ofstream(file, std::ios::trunc) << "previous contents\n";
    Spawn big;
    big.args = with(reference_6_18(), {"*:*", "-o", file.string()});
    big.max_file_size = 64 << 10;
    Result cut = run(big);
    EXPECT_EQ(cut.code, 1);
    EXPECT_EQ(cut.err, "tpgen: cannot write " + file.string() + ": File too large\n");
    EXPECT_EQ(slurp(file), "previous contents\n");
    EXPECT_EQ(files_in(dir), std::vector<std::string>{"fork.h"});

    // Failing before any output: the file is untouched.
    Result unknown = run(with(reference_6_18(), {"sched:no_such_event", "-o", file.string()}));
    EXPECT_EQ(unknown.code, 4);
    EXPECT_EQ(slurp(file), "previous contents\n");

    // A directory that cannot take the temporary file.
    Result nodir = run(with(reference_6_18(), {"sched:sched_process_fork", "-o", (dir / "no/such/dir/x.h").string()}));
    EXPECT_EQ(nodir.code, 1);
    EXPECT_TRUE(one_line(nodir.err));

    // Devices are written in place, never renamed over.
    Result null = run(with(reference_6_18(), {"sched:sched_process_fork", "-o", "/dev/null"}));
    EXPECT_EQ(null.code, 0) << null.err;
    EXPECT_TRUE(fs::is_character_file("/dev/null"));

    // Through a symlink: the link stays, its target gets the header.
    fs::path target = dir / "target.h", link = dir / "link.h";
    std::ofstream(target) << "old\n";
    fs::create_symlink(target, link);
    Result linked = run(with(reference_6_18(), {"sched:sched_process_fork", "-o", link.string()}));
    EXPECT_EQ(linked.code, 0) << linked.err;
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(slurp(target), golden);
}

namespace {

// A gzip member holding DATA; gzip members concatenated are one stream.
std::string gzip_member(const std::string& data)
{
    z_stream z{};
    deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, data.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// A ustar header block for a regular file.
std::string tar_header(const std::string& name, std::uint64_t size)
{
    std::string h(512, '\0');
    std::memcpy(h.data(), name.data(), name.size());
    std::snprintf(h.data() + 100, 8, "%07o", 0644);
    std::snprintf(h.data() + 108, 8, "%07o", 0);
    std::snprintf(h.data() + 116, 8, "%07o", 0);
    std::snprintf(h.data() + 124, 12, "%011llo", static_cast<unsigned long long>(size));
    std::snprintf(h.data() + 136, 12, "%011o", 0);
    h[156] = '0';
    std::memcpy(h.data() + 257, "ustar\0" "00", 8);
    std::memset(h.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h)
        sum += c;
    std::snprintf(h.data() + 148, 8, "%06o", sum);
    h[155] = ' ';
    return h;
}

// A .tar.gz of 8 KiB that holds 1 GiB of zeros before sched_process_fork's format: long to read.
fs::path slow_tarball()
{
    fs::path file = scratch() / "slow.tar.gz";
    if (fs::exists(file))
        return file;
    const std::uint64_t chunk = 16 << 20, chunks = 64;
    std::string zeros = gzip_member(std::string(chunk, '\0'));
    std::string format = slurp(fs::path(TPKIT_FORMATS_DIR) / "linux-6.18/sched/sched_process_fork/format");
    std::string tail = tar_header("sched/sched_process_fork/format", format.size()) + format;
    tail.resize((tail.size() + 511) / 512 * 512 + 1024, '\0');
    std::ofstream out(file, std::ios::binary);
    out << gzip_member(tar_header("filler/blob/data", chunk * chunks));
    for (std::uint64_t i = 0; i < chunks; ++i)
        out << zeros;
    out << gzip_member(tail);
    return file;
}

// Processes whose parent is this one (orphans reparent here while we are a subreaper).
std::vector<pid_t> children()
{
    std::vector<pid_t> found;
    for (const auto& e : fs::directory_iterator("/proc")) {
        std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::string stat = slurp(e.path() / "stat");
        auto close = stat.rfind(')');
        if (close == std::string::npos)
            continue;
        std::istringstream rest(stat.substr(close + 2));
        char state;
        pid_t ppid = 0;
        rest >> state >> ppid;
        if (ppid == getpid())
            found.push_back(std::stoi(name));
    }
    return found;
}

} // namespace

TEST(TpgenCli, ASignalWhileReadingATarballLeavesNothingBehind)
{
    fs::path tarball = slow_tarball();
    fs::path tmp = scratch() / "signal-tmp", out_dir = scratch() / "signal-out";
    fs::create_directories(tmp);
    fs::create_directories(out_dir);
    // Orphans of tpgen (a tar it ran) become our children, to be seen and reaped.
    ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    struct NoSubreaper {
        ~NoSubreaper() { prctl(PR_SET_CHILD_SUBREAPER, 0); }
    } no_subreaper;

    // The whole read works, and takes long enough for the signal to come during it.
    Spawn whole;
    whole.args = {"--formats", tarball.string(), "--btf", (data_dir / "btf/linux-6.18.btf.gz").string(),
                  "sched:sched_process_fork"};
    whole.tmpdir = tmp.string();
    auto start = std::chrono::steady_clock::now();
    Result done = run(whole);
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(done.code, 0) << done.err;
    EXPECT_EQ(done.err, "");
    RecordProperty("whole_read_ms",
                   static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));

    Spawn s = whole;
    s.args.insert(s.args.end(), {"-o", (out_dir / "fork.h").string()});
    fs::path err = scratch() / "signal-stderr";
    pid_t pid = spawn(s, err);
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(took / 4, std::chrono::milliseconds(150)));
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::vector<pid_t> orphans = children();
    for (pid_t orphan : orphans) {
        kill(orphan, SIGKILL);
        waitpid(orphan, nullptr, 0);
    }

    ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "tpgen finished before the signal (" << std::chrono::duration<double>(took).count()
        << " s for the whole read): nothing tested";
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
        << (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : "signal " + std::to_string(WTERMSIG(status)));
    EXPECT_EQ(orphans.size(), 0u) << "tpgen left a child running";
    EXPECT_EQ(files_in(tmp), std::vector<std::string>{}) << "tpgen left files in TMPDIR";
    EXPECT_EQ(files_in(out_dir), std::vector<std::string>{}) << "tpgen left an output file";
    EXPECT_EQ(slurp(err), "");
    std::error_code ec;
    fs::remove_all(tmp, ec);
}
