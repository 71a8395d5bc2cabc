// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The generic tools against real events: a reader process makes read() calls of known sizes,
// fork batches make known forks, and tphist, tpcount and tpsnoop must see exactly those.
#include "live.hpp"
#include "tool_run.hpp"

#include "tpkit/kernel/format.hpp"
#include "tpkit/kernel/tracefs.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::poke_attempts;
using tpkit::live::poke_wait;
using tpkit::live::ToolRun;

namespace {

constexpr int zero_fd = 100; // the reader's /dev/zero: filters on it leave its pipe reads out

// A child process that reads /dev/zero on fd 100 with the sizes it is asked for.
class Reader {
public:
    Reader()
    {
        int cmd[2], ack[2];
        if (pipe(cmd) != 0 || pipe(ack) != 0)
            throw std::runtime_error("pipe failed");
        pid_ = fork();
        if (pid_ < 0)
            throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            close(cmd[1]);
            close(ack[0]);
            prctl(PR_SET_NAME, "tpkit-reader", 0, 0, 0);
            int fd = open("/dev/zero", O_RDONLY);
            if (fd < 0 || dup2(fd, zero_fd) != zero_fd)
                _exit(90);
            static char buf[1 << 16];
            std::uint64_t address = reinterpret_cast<std::uintptr_t>(buf);
            if (write(ack[1], &address, sizeof(address)) != sizeof(address))
                _exit(91);
            std::uint32_t request[2];
            while (::read(cmd[0], request, sizeof(request)) == sizeof(request)) {
                for (std::uint32_t i = 0; i < request[1]; i++)
                    if (::read(zero_fd, buf, request[0]) != static_cast<ssize_t>(request[0]))
                        _exit(92);
                if (write(ack[1], "k", 1) != 1)
                    _exit(93);
            }
            _exit(0);
        }
        close(cmd[0]);
        close(ack[1]);
        cmd_ = cmd[1];
        ack_ = ack[0];
        if (::read(ack_, &buffer_, sizeof(buffer_)) != sizeof(buffer_))
            throw std::runtime_error("reader did not start");
    }
    ~Reader()
    {
        close(cmd_);
        close(ack_);
        waitpid(pid_, nullptr, 0);
    }

    // `times` reads of `size` bytes, done when this returns.
    void read(std::uint32_t size, std::uint32_t times)
    {
        std::uint32_t request[2] = {size, times};
        char k;
        if (write(cmd_, request, sizeof(request)) != sizeof(request) || ::read(ack_, &k, 1) != 1)
            throw std::runtime_error("reader failed");
    }

    pid_t pid() const { return pid_; }
    std::uint64_t buffer() const { return buffer_; }

private:
    pid_t pid_ = -1;
    int cmd_ = -1, ack_ = -1;
    std::uint64_t buffer_ = 0;
};

bool has(const std::string& line, const std::string& text) { return line.find(text) != std::string::npos; }


// The reads expect_read_histogram makes, by size: reads_of_N reads of N bytes.
constexpr std::uint64_t reads_of_0 = 2, reads_of_1 = 3, reads_of_100 = 5, reads_of_500 = 7;

// tphist over the reader's reads (reads_of_N); markers of 3000 bytes (in the bucket starting at
// marker_low) until a histogram shows one.
void expect_read_histogram(const std::vector<std::string>& args, bool filter_by_pid,
                           std::uint64_t marker_low, std::map<std::uint64_t, std::uint64_t> expected)
{
    TPKIT_REQUIRE_LIVE();
    Reader reader;
    std::string pid = std::to_string(reader.pid());
    std::vector<std::string> argv{tpkit::live::tool_path("tphist"), "syscalls:sys_enter_read", "count",
                                  "--json", "0.1"};
    if (filter_by_pid) {
        argv.insert(argv.end(), {"--filter", "common_pid == " + pid + " && fd == 100"});
    } else {
        argv.insert(argv.end(), {"-p", pid, "--filter", "fd == 100"});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    ToolRun tool(argv);

    const std::string marker = "\"low\":" + std::to_string(marker_low) + ",";
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [&] { reader.read(3000, 1); }, [&](const std::string& l) { return has(l, marker); },
        poke_attempts, poke_wait))
        << tool.stderr_text();
    reader.read(0, reads_of_0);
    reader.read(1, reads_of_1);
    reader.read(100, reads_of_100);
    reader.read(500, reads_of_500);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    auto counts = tpkit::live::histogram_buckets(tool.lines());
    counts.erase(marker_low);
    EXPECT_EQ(counts, expected);
}

} // namespace

TEST(TphistExact, Log2BucketsOfReadSizesFilteredByCommonPid)
{
    expect_read_histogram({}, true, 2048,
                          {{0, reads_of_0 + reads_of_1}, {64, reads_of_100}, {256, reads_of_500}});
}

TEST(TphistLive, Log2BucketsWithPidOption)
{
    expect_read_histogram({}, false, 2048,
                          {{0, reads_of_0 + reads_of_1}, {64, reads_of_100}, {256, reads_of_500}});
}

TEST(TphistLive, LinearBuckets)
{
    expect_read_histogram({"--linear", "0,1000,100"}, true, 1000,
                          {{0, reads_of_0 + reads_of_1}, {100, reads_of_100}, {500, reads_of_500}});
}

TEST(TphistLive, LogLinearBuckets)
{
    // 2 sub-bits: 100 is in [96, 111], 500 in [448, 511], 3000 in [2560, 3071].
    expect_read_histogram(
        {"--loglinear", "2"}, false, 2560,
        {{0, reads_of_0}, {1, reads_of_1}, {96, reads_of_100}, {448, reads_of_500}});
}

TEST(TphistLive, ByCommKeysTheHistogram)
{
    TPKIT_REQUIRE_LIVE();
    Reader reader;
    ToolRun tool({tpkit::live::tool_path("tphist"), "syscalls:sys_enter_read", "count", "--json",
                  "0.1", "--by", "comm", "--filter", "fd == 100"});
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [&] { reader.read(3000, 1); },
        [](const std::string& l) { return has(l, "\"key\":\"tpkit-reader\""); },
        poke_attempts, poke_wait))
        << tool.stderr_text();
    constexpr std::uint64_t reads_of_100_bytes = 4;
    reader.read(100, reads_of_100_bytes);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    for (const auto& line : tool.lines()) {
        if (has(line, "\"key\":\"tpkit-reader\"")) {
            EXPECT_TRUE(has(line, "\"field\":\"count\"")) << line;
        }
    }
    EXPECT_EQ(tpkit::live::histogram_buckets(tool.lines(), "tpkit-reader")[64], reads_of_100_bytes);
}

// The generic engine on the fork event's comm, which 6.1 keeps inline (char[16]) and later
// kernels as __data_loc: a glob filter on it, a histogram of child pids per forking comm.
TEST(TphistExact, ChildPidsOfForksByCommThroughAStringFilter)
{
    TPKIT_REQUIRE_LIVE();
    ToolRun tool({tpkit::live::tool_path("tphist"), "sched:sched_process_fork", "child_pid", "--by",
                  "comm", "--json", "0.1", "--filter", "parent_comm ~ \"tpk-*\""});
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [] { tpkit::live::run_marker_fork("tpk-marker"); },
        [](const std::string& l) { return has(l, "\"key\":\"tpk-marker\""); },
        poke_attempts, poke_wait))
        << tool.stderr_text();
    constexpr int children = 20, threads = 0;
    auto batch = tpkit::live::run_fork_batch("tpk-forker", children, threads);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    std::map<std::uint64_t, std::uint64_t> expected;
    for (pid_t child : batch.children) {
        std::uint64_t low = 1;
        while (low * 2 <= static_cast<std::uint64_t>(child))
            low *= 2;
        expected[low]++;
    }
    EXPECT_EQ(tpkit::live::histogram_buckets(tool.lines(), "tpk-forker"), expected);
    for (const auto& line : tool.lines()) {
        auto key = tpkit::live::parse_flat_json(line)["key"];
        EXPECT_TRUE(key.empty() || key.rfind("tpk-", 0) == 0) << "the filter let through " << line;
    }
}

namespace {

// The batch count_forks counts, all of its forks.
constexpr int counted_children = 7, counted_threads = 3;
constexpr std::uint64_t counted_forks = counted_children + counted_threads;

// tpcount over sched_process_fork: markers until counted, then one batch of counted_children
// and counted_threads; returns the tool's lines and the batch.
struct CountedForks {
    std::vector<std::string> lines;
    tpkit::live::ForkBatch batch;
};

CountedForks count_forks(const std::string& by)
{
    ToolRun tool({tpkit::live::tool_path("tpcount"), "sched:sched_process_fork", "--by", by, "--json",
                  "0.1"});
    std::string expect;
    auto mark = [&] {
        auto marker = tpkit::live::run_marker_fork("tpkit-mark");
        expect = by == "comm" ? "\"comm\":\"tpkit-mark\""
                              : "\"parent_pid\":" + std::to_string(marker.forker) + ",";
    };
    EXPECT_TRUE(tpkit::live::poke_until_line(
        tool, mark, [&](const std::string& l) { return has(l, expect); }, poke_attempts, poke_wait))
        << tool.stderr_text();
    CountedForks result;
    result.batch = tpkit::live::run_fork_batch("tpkit-count", counted_children, counted_threads);
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    result.lines = tool.lines();
    return result;
}

std::uint64_t sum_counts(const std::vector<std::string>& lines, const std::string& key,
                         const std::string& value)
{
    std::uint64_t total = 0;
    for (const auto& line : lines) {
        auto obj = tpkit::live::parse_flat_json(line);
        if (obj[key] == value && obj["event"] == "sched:sched_process_fork")
            total += std::stoull(obj["count"]);
    }
    return total;
}

} // namespace

TEST(TpcountExact, ByCommCountsEveryFork)
{
    TPKIT_REQUIRE_LIVE();
    auto counted = count_forks("comm");
    EXPECT_EQ(sum_counts(counted.lines, "comm", "tpkit-count"), counted_forks);
}

TEST(TpcountExact, ByFieldCountsEveryFork)
{
    TPKIT_REQUIRE_LIVE();
    auto counted = count_forks("parent_pid");
    EXPECT_EQ(sum_counts(counted.lines, "parent_pid", std::to_string(counted.batch.forker)),
              counted_forks);
}

TEST(TpcountLive, TotalsOfSeveralEvents)
{
    TPKIT_REQUIRE_LIVE();
    Reader reader;
    ToolRun tool({tpkit::live::tool_path("tpcount"), "syscalls:sys_enter_read", "syscalls:sys_enter_lseek",
                  "-p", std::to_string(reader.pid()), "--filter", "fd == 100", "--json", "0.1"});
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, [&] { reader.read(1, 1); },
        [](const std::string& l) { return has(l, "sys_enter_read"); }, poke_attempts, poke_wait))
        << tool.stderr_text();
    auto before = tool.lines().size();
    constexpr std::uint64_t counted_reads = 9;
    reader.read(1, counted_reads);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    std::uint64_t reads = 0, lseeks = 0;
    for (std::size_t i = before; i < tool.lines().size(); i++) {
        auto obj = tpkit::live::parse_flat_json(tool.lines()[i]);
        (obj["event"] == "syscalls:sys_enter_read" ? reads : lseeks) += std::stoull(obj["count"]);
    }
    EXPECT_EQ(reads, counted_reads);
    EXPECT_EQ(lseeks, 0u);
}

// Counting starts once every event is attached: the run's own bpf() calls while it loads and
// attaches (dozens per event) are not counted. Once armed, only its drain counts: its first
// bpf() call, which swaps the keyed map, lands in the half it then reads. That one shows with
// --include-self only: by default the tool's own process is left out.
TEST(TpcountLive, OwnAttachCallsAreNotCounted)
{
    TPKIT_REQUIRE_LIVE();
    for (bool include_self : {true, false}) {
        SCOPED_TRACE(include_self ? "--include-self" : "by default");
        std::vector<std::string> argv{tpkit::live::tool_path("tpcount"), "syscalls:sys_enter_b*", "--by",
                                      "comm", "--comm", "tpcount", "--json", "-d", "0.3"};
        if (include_self)
            argv.push_back("--include-self");
        ToolRun tool(argv);
        ASSERT_EQ(tool.wait(tpkit::live::patient(20s)), 0) << tool.stderr_text();
        std::uint64_t own_bpf = 0;
        for (const auto& line : tool.lines()) {
            auto obj = tpkit::live::parse_flat_json(line);
            if (obj["event"] == "syscalls:sys_enter_bpf")
                own_bpf += std::stoull(obj["count"]);
        }
        EXPECT_EQ(own_bpf, include_self ? 1u : 0u);
    }
}

namespace {

constexpr std::size_t snooped_children = 3;

// tpsnoop over forks: marker forks by `marker` until one shows, then a batch of snooped_children
// children named `comm`.
std::pair<std::vector<std::string>, tpkit::live::ForkBatch>
snoop_forks(std::vector<std::string> args, const std::string& comm, const std::string& marker = "tpkit-mark")
{
    std::vector<std::string> argv{tpkit::live::tool_path("tpsnoop"), "sched:sched_process_fork"};
    argv.insert(argv.end(), args.begin(), args.end());
    ToolRun tool(argv);
    EXPECT_TRUE(tpkit::live::poke_until_line(
        tool, [&] { tpkit::live::run_marker_fork(marker); },
        [&](const std::string& l) { return has(l, marker); }, poke_attempts, poke_wait))
        << tool.stderr_text();
    auto batch = tpkit::live::run_fork_batch(comm, snooped_children, 0);
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    return {tool.lines(), batch};
}

void expect_forks_decoded(const std::vector<std::string>& extra)
{
    std::vector<std::string> args{"--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto [lines, batch] = snoop_forks(args, "tpkit-snoop");
    ASSERT_EQ(batch.children.size(), snooped_children);
    for (pid_t child : batch.children) {
        int found = 0;
        for (const auto& line : lines) {
            auto obj = tpkit::live::parse_flat_json(line);
            auto fields = tpkit::live::parse_flat_json(obj["fields"]);
            if (fields["child_pid"] != std::to_string(child))
                continue;
            found++;
            EXPECT_EQ(obj["event"], "sched:sched_process_fork");
            EXPECT_EQ(obj["comm"], "tpkit-snoop");
            EXPECT_EQ(obj["pid"], std::to_string(batch.forker));
            EXPECT_EQ(fields["parent_pid"], std::to_string(batch.forker));
            EXPECT_EQ(fields["parent_comm"], "tpkit-snoop");
            EXPECT_EQ(fields["child_comm"], "tpkit-snoop");
        }
        EXPECT_EQ(found, 1) << "child " << child;
    }
    EXPECT_EQ(lines.back(), "{\"type\":\"lost\",\"lost_events\":0}");
}

} // namespace

TEST(TpsnoopExact, DecodesForksFromTheRingBuffer) { expect_forks_decoded({}); }

TEST(TpsnoopExact, DecodesForksFromThePerfBuffer) { expect_forks_decoded({"--perf-buffer"}); }

TEST(TpsnoopLive, HeaderFieldsAreTheThreadAndTheEventId)
{
    TPKIT_REQUIRE_LIVE();
    // BPF runs before the kernel writes the record's common_* header: tpsnoop fills in common_pid
    // and common_type as the kernel writes them.
    auto id = std::to_string(
        tpkit::read_format(tpkit::event_dir({"sched", "sched_process_fork"}) / "format").id);
    auto [lines, batch] =
        snoop_forks({"--json", "-f", "child_pid,common_type,common_pid"}, "tpkit-header");
    std::size_t found = 0;
    for (const auto& line : lines) {
        auto obj = tpkit::live::parse_flat_json(line);
        if (obj["event"].empty())
            continue; // the closing {"type":"lost","lost_events":0}
        auto fields = tpkit::live::parse_flat_json(obj["fields"]);
        EXPECT_EQ(fields.size(), 3u) << line; // those of -f
        EXPECT_EQ(fields["common_type"], id) << line;
        EXPECT_EQ(fields["common_pid"], obj["tid"]) << line;
        bool ours = std::find(batch.children.begin(), batch.children.end(),
                              std::stoi(fields["child_pid"])) != batch.children.end();
        if (ours) {
            found++;
            EXPECT_EQ(fields["common_pid"], std::to_string(batch.forker)) << line;
        }
    }
    EXPECT_EQ(found, snooped_children);
}

TEST(TpsnoopLive, TracePipeStyleLines)
{
    TPKIT_REQUIRE_LIVE();
    // Markers must pass --comm too: they have the batch's name.
    auto [lines, batch] = snoop_forks({"--comm", "tpkit-text"}, "tpkit-text", "tpkit-text");
    for (pid_t child : batch.children) {
        // The kernel's print fmt: the parent as comm= and pid=.
        std::string tail = "sched_process_fork: comm=tpkit-text pid=" +
                           std::to_string(batch.forker) + " child_comm=tpkit-text child_pid=" +
                           std::to_string(child);
        std::string head = "tpkit-text-" + std::to_string(batch.forker);
        int found = 0;
        for (const auto& line : lines)
            if (has(line, tail)) {
                found++;
                EXPECT_TRUE(has(line, head)) << line;
                EXPECT_TRUE(line.size() > tail.size() &&
                            line.compare(line.size() - tail.size(), tail.size(), tail) == 0)
                    << line;
            }
        EXPECT_EQ(found, 1) << child;
    }
}

TEST(TpsnoopLive, DecodesSyscallArguments)
{
    TPKIT_REQUIRE_LIVE();
    Reader reader;
    ToolRun tool({tpkit::live::tool_path("tpsnoop"), "syscalls:sys_enter_read", "--json", "-p",
                  std::to_string(reader.pid()), "--filter", "fd == 100 && count != 3000"});
    // Markers of 2999 bytes pass; the filter keeps 3000 out.
    auto mark = [&] {
        reader.read(3000, 1);
        reader.read(2999, 1);
    };
    ASSERT_TRUE(tpkit::live::poke_until_line(
        tool, mark, [](const std::string& l) { return has(l, "\"count\":2999"); },
        poke_attempts, poke_wait))
        << tool.stderr_text();
    constexpr int decoded_reads = 2;
    reader.read(12345, decoded_reads);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    int found = 0;
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(reader.buffer()));
    for (const auto& line : tool.lines()) {
        EXPECT_FALSE(has(line, "\"count\":3000")) << line;
        auto obj = tpkit::live::parse_flat_json(line);
        auto fields = tpkit::live::parse_flat_json(obj["fields"]);
        if (fields["count"] != "12345")
            continue;
        found++;
        EXPECT_EQ(obj["comm"], "tpkit-reader");
        EXPECT_EQ(obj["pid"], std::to_string(reader.pid()));
        EXPECT_EQ(fields["fd"], "100");
        EXPECT_EQ(fields["buf"], buf);
        EXPECT_EQ(fields["__syscall_nr"], std::to_string(SYS_read));
    }
    EXPECT_EQ(found, decoded_reads);
}

TEST(EngineToolErrors, ExitCodesAndOneLine)
{
    TPKIT_REQUIRE_LIVE();
    struct Case {
        std::vector<std::string> argv;
        int code;
        std::string message;
    };
    const Case cases[] = {
        {{"tphist", "sched:nosuch", "x"}, 4, "tphist: unknown tracepoint 'sched:nosuch'"},
        {{"tphist", "syscalls:sys_enter_read", "nosuch"}, 4,
         "tphist: syscalls:sys_enter_read has no field 'nosuch' (fields: __syscall_nr, fd, buf, count)"},
        {{"tphist", "sched:sched_process_fork", "child_comm"}, 2, "tphist: field 'child_comm'"},
        {{"tphist", "syscalls:sys_enter_read", "count", "--filter", "count >"}, 2, "tphist: filter:"},
        {{"tphist", "syscalls:sys_enter_read", "count", "--linear", "5,1"}, 2, "tphist: bad --linear"},
        {{"tpcount", "sched:sched_process_fork", "--by", "nosuch"}, 4, "tpcount: sched:sched_process_fork has no field"},
        {{"tpcount", "nosuch:*"}, 4, "tpcount: no tracepoint matches 'nosuch:*'"},
        {{"tpcount", "sched:sched_process_fork", "0"}, 2, "tpcount: interval '0'"},
        {{"tpsnoop", "sched:sched_process_fork", "-f", "nosuch"}, 4, "tpsnoop: sched:sched_process_fork has no field 'nosuch'"},
        {{"tpsnoop", "sched:sched_process_fork", "--bogus"}, 2, "tpsnoop: "},
        {{"tpsnoop", "sched:sched_process_fork", "-f", "child_pid,common_flags"}, 2,
         "tpsnoop: -f 'common_flags' is not visible to BPF programs at a tracepoint (the kernel "
         "fills it in after they run, from state BPF cannot read)"},
        {{"tpcount", "sched:sched_process_fork", "--filter", "common_preempt_count > 0"}, 2,
         "tpcount: filter: 'common_preempt_count' is not visible to BPF programs at a tracepoint"},
        {{"tphist", "sched:sched_process_fork", "child_pid", "--by", "common_flags"}, 2,
         "tphist: --by 'common_flags' is not visible to BPF programs at a tracepoint"},
        {{"tplist", "nosuch:*"}, 4, "tplist: no tracepoint matches"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> argv = c.argv;
        argv[0] = tpkit::live::tool_path(argv[0]);
        ToolRun tool(argv);
        EXPECT_EQ(tool.wait(10s), c.code) << c.argv[0] << " " << c.argv[1];
        EXPECT_EQ(tool.stderr_text().rfind(c.message, 0), 0u) << tool.stderr_text();
        EXPECT_EQ(std::count(tool.stderr_text().begin(), tool.stderr_text().end(), '\n'), 1)
            << tool.stderr_text();
    }
}

TEST(EngineToolCleanup, NothingStaysLoaded)
{
    TPKIT_REQUIRE_LIVE();
    const std::vector<std::pair<std::vector<std::string>, int>> runs = {
        {{"tphist", "syscalls:sys_enter_read", "count", "--by", "comm"}, SIGINT},
        {{"tpcount", "syscalls:sys_enter_rea*", "sched:sched_process_fork"}, SIGTERM},
        {{"tpsnoop", "sched:sched_process_fork", "syscalls:sys_enter_write", "-d", "0.5"}, 0},
        {{"tpcount", "sched:sched_process_fork", "--by", "nosuch"}, 0},
    };
    for (const auto& [args, sig] : runs) {
        std::vector<std::string> argv = args;
        argv[0] = tpkit::live::tool_path(argv[0]);
        const auto before = tpkit::live::loaded_program_ids();
        ToolRun tool(argv);
        if (sig) {
            // Running means loaded: wait until it is attached, then stop it.
            constexpr std::size_t a_link = 1; // and "ready": all attached
            tool.wait_until_attached(a_link, 2s);
            tool.stop(sig);
        } else {
            tool.wait(20s);
        }
        tpkit::live::expect_none_left_behind(before, args[0]);
    }
}
