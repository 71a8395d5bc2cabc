// Limits a user can reach with accepted options: map memory refused before any map exists, a
// stdout nobody reads, and keyed maps drained while BPF keeps counting.
#include "live.hpp"
#include "tool_run.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

const std::vector<std::string> engine_programs{"snoop_event", "count_event", "hist_event"};

} // namespace

TEST(MapMemory, RefusedBeforeAnyMapIsCreated)
{
    TPKIT_REQUIRE_LIVE();
    // 1024 keys of log-linear histograms take ~16 MB on 2 CPUs: past a 1 MiB limit. Should the
    // check ever fail, this asks the kernel for 16 MB, not the 16 GB the same options with
    // --max-keys 1048576 would.
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
    EXPECT_TRUE(tpkit::live::wait_until_unloaded(engine_programs, 5s));
}

TEST(BlockedStdout, SignalStopsTpsnoopAndEveryEventIsAccountedFor)
{
    TPKIT_REQUIRE_LIVE();
    constexpr std::uint64_t calls = 20000;
    Caller caller(calls);
    ToolRun tool({tpkit::live::tool_path("tpsnoop"), "syscalls:sys_enter_getppid", "-p",
                  std::to_string(caller.pid())});
    tool.shrink_stdout_pipe();
    ASSERT_TRUE(tool.wait_until_attached(1, 20s)) << tool.stderr_text();
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
    EXPECT_TRUE(tpkit::live::wait_until_unloaded(engine_programs, 5s));
}

TEST(BlockedStdout, SignalStopsIntervalOutput)
{
    TPKIT_REQUIRE_LIVE();
    // 100 intervals a second: one page of pipe is full within a second.
    ToolRun tool({tpkit::live::tool_path("tpcount"), "sched:sched_switch", "--by", "cpu", "0.01"});
    tool.shrink_stdout_pipe();
    ASSERT_TRUE(tool.wait_until_attached(1, 20s)) << tool.stderr_text();
    std::this_thread::sleep_for(1500ms);
    kill(tool.pid(), SIGTERM);
    ASSERT_EQ(tool.wait_without_reading_stdout(10s), 0) << tool.stderr_text();
    EXPECT_GT(stderr_figure(tool.stderr_text(), "lines of output not written"), 0u)
        << tool.stderr_text();
    EXPECT_TRUE(tpkit::live::wait_until_unloaded(engine_programs, 5s));
}
