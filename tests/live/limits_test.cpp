// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Limits a user can reach with accepted options: map memory refused before any map exists, a
// stdout nobody reads, and keyed maps drained while BPF keeps counting.
#include "live.hpp"
#include "tool_run.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <stdexcept>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

// A child that makes `calls` getppid() calls when go() is called, then exits.
class Caller {
public:
    explicit Caller(std::uint64_t calls)
    {
        int fds[2];
        if (pipe(fds) != 0)
            throw std::runtime_error("pipe failed");
        pid_ = fork();
        if (pid_ < 0)
            throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            close(fds[1]);
            char go;
            if (read(fds[0], &go, 1) != 1)
                _exit(1);
            for (std::uint64_t i = 0; i < calls; i++)
                syscall(SYS_getppid);
            _exit(0);
        }
        close(fds[0]);
        go_fd_ = fds[1];
    }
    ~Caller()
    {
        if (go_fd_ >= 0)
            close(go_fd_);
        waitpid(pid_, nullptr, 0);
    }

    pid_t pid() const { return pid_; }

    // Makes the calls and waits until they are done.
    void go()
    {
        if (write(go_fd_, "g", 1) != 1)
            throw std::runtime_error("caller gone");
        close(go_fd_);
        go_fd_ = -1;
        int status = 0;
        waitpid(pid_, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            throw std::runtime_error("caller failed");
    }

private:
    pid_t pid_ = -1;
    int go_fd_ = -1;
};

// The N of "TOOL: N <what>" on stderr, 0 when there is no such line.
std::uint64_t stderr_figure(const std::string& err, const std::string& what)
{
    std::smatch m;
    if (std::regex_search(err, m, std::regex(": ([0-9]+) " + what)))
        return std::stoull(m[1]);
    return 0;
}

} // namespace

TEST(MapMemory, RefusedBeforeAnyMapIsCreated)
{
    TPKIT_REQUIRE_LIVE();
    // 1024 keys of log-linear histograms take ~16 MB on 2 CPUs: past a 1 MiB limit. Should the
    // check ever fail, this asks the kernel for 16 MB, not the 16 GB the same options with
    // --max-keys 1048576 would.
    const auto before = tpkit::live::loaded_program_ids();
    ToolRun hist({tpkit::live::tool_path("tphist"), "syscalls:sys_enter_read", "count", "--by", "pid",
                  "--loglinear", "4", "--max-map-memory", "1", "-d", "1"});
    EXPECT_EQ(hist.wait(20s), 2);
    EXPECT_TRUE(std::regex_match(
        hist.stderr_text(),
        std::regex("tphist: the maps of tphist would take [0-9.]+ MiB of kernel memory on [0-9]+ "
                   "CPUs, more than the limit of 1.0 MiB: ask for fewer keys \\(--max-keys\\) or "
                   "raise --max-map-memory\n")))
        << hist.stderr_text();

    ToolRun count({tpkit::live::tool_path("tpcount"), "syscalls:sys_enter_read", "--by", "comm",
                   "--max-keys", "16777216", "--max-map-memory", "64", "-d", "1"});
    EXPECT_EQ(count.wait(20s), 2);
    EXPECT_NE(count.stderr_text().find("GiB of kernel memory"), std::string::npos)
        << count.stderr_text();
    tpkit::live::expect_none_left_behind(before);
}

namespace {

// tpsnoop (with `options`) streaming 20,000 getppid() calls into a stdout that is not read until
// it exits: every call is a line written, a lost event or a line counted as not written,
// including the events still in the ring or perf buffer when the stop signal comes.
void expect_blocked_stdout_accounts_for_every_event(const std::vector<std::string>& options)
{
    constexpr std::uint64_t calls = 20000;
    Caller caller(calls);
    std::vector<std::string> argv{tpkit::live::tool_path("tpsnoop"), "syscalls:sys_enter_getppid",
                                  "-p", std::to_string(caller.pid())};
    argv.insert(argv.end(), options.begin(), options.end());
    const auto before = tpkit::live::loaded_program_ids();
    ToolRun tool(argv);
    tool.shrink_stdout_pipe();
    constexpr std::size_t links = 1; // its one event
    ASSERT_TRUE(tool.wait_until_attached(links, 20s)) << tool.stderr_text();
    caller.go();
    std::this_thread::sleep_for(200ms);
    kill(tool.pid(), SIGINT);
    // Blocked in write, SIGINT would stay pending and only SIGKILL (137) would end it.
    ASSERT_EQ(tool.wait_without_reading_stdout(10s), 0) << tool.stderr_text();
    const std::uint64_t written = tool.lines().size() - tool.ended_mid_line();
    const std::uint64_t lost = stderr_figure(tool.stderr_text(), "events lost");
    const std::uint64_t unwritten = stderr_figure(tool.stderr_text(), "lines of output not written");
    EXPECT_GT(unwritten + lost, 0u) << tool.stderr_text();
    EXPECT_EQ(written + lost + unwritten, calls) << tool.stderr_text();
    tpkit::live::expect_none_left_behind(before);
}

} // namespace

TEST(BlockedStdout, SignalStopsTpsnoopAndEveryEventIsAccountedFor)
{
    TPKIT_REQUIRE_LIVE();
    expect_blocked_stdout_accounts_for_every_event({});
}

// A perf buffer (64 pages per CPU) still holds ~2,500 of these events when the stop comes.
TEST(BlockedStdout, SignalStopsTpsnoopPerfBufferAndEveryEventIsAccountedFor)
{
    TPKIT_REQUIRE_LIVE();
    expect_blocked_stdout_accounts_for_every_event({"--perf-buffer"});
}

TEST(BlockedStdout, SignalStopsIntervalOutput)
{
    TPKIT_REQUIRE_LIVE();
    // 100 intervals a second: one page of pipe is full within a second.
    const auto before = tpkit::live::loaded_program_ids();
    ToolRun tool({tpkit::live::tool_path("tpcount"), "sched:sched_switch", "--by", "cpu", "0.01"});
    tool.shrink_stdout_pipe();
    constexpr std::size_t links = 1; // its one event
    ASSERT_TRUE(tool.wait_until_attached(links, 20s)) << tool.stderr_text();
    std::this_thread::sleep_for(1500ms);
    kill(tool.pid(), SIGTERM);
    ASSERT_EQ(tool.wait_without_reading_stdout(10s), 0) << tool.stderr_text();
    EXPECT_GT(stderr_figure(tool.stderr_text(), "lines of output not written"), 0u)
        << tool.stderr_text();
    tpkit::live::expect_none_left_behind(before);
}

namespace {

// Runs TOOL ARGS with 20 ms intervals while a caller makes 2M getppid() calls: what the JSON
// lines say for the caller's pid under `figure` must add up to exactly that.
void expect_exact_keyed_sum(const std::string& tool_name,
                                             std::vector<std::string> args, const std::string& figure)
{
    constexpr std::uint64_t calls = 2'000'000;
    Caller caller(calls);
    std::vector<std::string> argv{tpkit::live::tool_path(tool_name)};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--by", "pid", "--json", "0.02", "--filter",
                             "common_pid == " + std::to_string(caller.pid())});
    ToolRun tool(argv);
    constexpr std::size_t links = 1; // its one event
    EXPECT_TRUE(tool.wait_until_attached(links, 20s)) << tool.stderr_text();
    caller.go();
    // Two intervals more, so the last increments have been drained.
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    std::uint64_t sum = 0;
    const std::string pid = std::to_string(caller.pid());
    std::string caller_lines; // each interval's figure, to see where a shortfall is
    for (const auto& line : tool.lines()) {
        auto obj = tpkit::live::parse_flat_json(line);
        if (obj["pid"] == pid || obj["key"] == pid) {
            sum += std::stoull(obj[figure]);
            caller_lines += obj[figure] + " ";
        }
    }
    EXPECT_EQ(sum, calls) << tool.stderr_text() << "\nper interval: " << caller_lines << "\nlines: "
                          << tool.lines().size();
}

} // namespace

TEST(KeyedDrain, TpcountLosesNoIncrementAcrossShortIntervals)
{
    TPKIT_REQUIRE_LIVE();
    expect_exact_keyed_sum("tpcount", {"syscalls:sys_enter_getppid"}, "count");
}

TEST(KeyedDrain, TphistLosesNoIncrementAcrossShortIntervals)
{
    TPKIT_REQUIRE_LIVE();
    expect_exact_keyed_sum("tphist", {"syscalls:sys_enter_getppid", "__syscall_nr"}, "total");
}

namespace {

// Runs PATH (a link to /bin/true) and waits for it.
void run_program(const std::string& path)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(path.c_str(), path.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("cannot run " + path);
}

} // namespace

TEST(KeyedDrain, StringKeysLongerThanAKeyAreNeverMergedSilently)
{
    TPKIT_REQUIRE_LIVE();
    char dir_template[] = "/tmp/tpkit-cut-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    const std::string dir = dir_template;
    // Three paths: exactly 63 characters (fits a key), and two of 80 and 90 that share those 63.
    const std::string exact = dir + "/" + std::string(63 - dir.size() - 1, 'p');
    const std::string longer = exact + std::string(17, 'x');
    const std::string longest = exact + std::string(27, 'y');
    for (const auto& path : {exact, longer, longest})
        ASSERT_EQ(symlink("/bin/true", path.c_str()), 0) << path;

    ToolRun tool({tpkit::live::tool_path("tpcount"), "sched:sched_process_exec", "--by", "filename",
                  "--json", "--filter", "filename ~ \"" + dir + "/*\""});
    constexpr std::size_t links = 1; // its one event
    ASSERT_TRUE(tool.wait_until_attached(links, 20s)) << tool.stderr_text();
    run_program(exact);
    run_program(longer);
    run_program(longest);
    run_program(longest);
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    for (const auto& path : {exact, longer, longest})
        unlink(path.c_str());
    rmdir(dir.c_str());

    std::map<std::string, std::string> counts;
    for (const auto& line : tool.lines()) {
        auto obj = tpkit::live::parse_flat_json(line);
        counts[obj["filename"]] = obj["count"];
    }
    // exact's run, and the three runs of the longer paths under the cut key.
    const std::map<std::string, std::string> expected{{exact, "1"}, {exact + "…", "3"}};
    EXPECT_EQ(counts, expected);
    EXPECT_NE(tool.stderr_text().find("values of filename longer than 63 characters are cut there"),
              std::string::npos)
        << tool.stderr_text();
}
