// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// klockstat against the kernel's own trace of lock:contention_begin and contention_end: a
// child's threads (tpk-locker) map and unmap memory at once, so that they contend for their
// process's mmap_lock (an rwsem) and the spinlocks around it, and others write to and read from
// one pipe, contending for its mutex (a mutex's wait begins twice, as it spins and as it
// sleeps, and ends once), while a private trace instance
// records the same tasks' contention events. Paired per thread as the tool pairs them (an end
// closes the innermost pending begin of its lock; a begin of the lock already innermost, the
// mutex's spin then sleep, continues that wait), the trace's contentions per lock address are
// the tool's counts, exactly.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include "klockstat.skel.h"
#include <tpkit/tools/klockstat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

// Named, not anonymous: the live tests are compiled in unity batches.
namespace klocks {

constexpr const char* comm = "tpk-locker";
constexpr int mappers = 4;
constexpr int writers = 3;
constexpr int threads = mappers + writers + 1; // and the pipe's reader
constexpr int rounds = 3000;
constexpr int chunk = 4096; // a copy long enough that the pipe's mutex is held as others come

int pipe_fds[2];

// The threads' TIDs, for the wait until each is freed: shared with the test.
pid_t* tids = nullptr;

void* map_and_unmap(void* slot)
{
    static_cast<pid_t*>(slot)[0] = static_cast<pid_t>(syscall(SYS_gettid));
    for (int i = 0; i < rounds; i++) {
        void* p = mmap(nullptr, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return reinterpret_cast<void*>(1);
        static_cast<volatile char*>(p)[0] = 1; // a page fault: mmap_lock taken for reading
        munmap(p, 16 * 4096);
    }
    return nullptr;
}

void* write_pipe(void* slot)
{
    static_cast<pid_t*>(slot)[0] = static_cast<pid_t>(syscall(SYS_gettid));
    char buf[chunk] = {};
    for (int i = 0; i < rounds; i++)
        if (write(pipe_fds[1], buf, sizeof(buf)) != static_cast<ssize_t>(sizeof(buf)))
            return reinterpret_cast<void*>(1);
    return nullptr;
}

void* read_pipe(void* slot)
{
    static_cast<pid_t*>(slot)[0] = static_cast<pid_t>(syscall(SYS_gettid));
    char buf[chunk];
    for (long left = long(writers) * rounds * chunk; left > 0;) {
        const ssize_t n = read(pipe_fds[0], buf, sizeof(buf));
        if (n <= 0)
            return reinterpret_cast<void*>(1);
        left -= n;
    }
    return nullptr;
}

int contend()
{
    if (pipe(pipe_fds) != 0)
        return 4;
    pthread_t t[threads];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], nullptr,
                           i < mappers ? map_and_unmap : i < mappers + writers ? write_pipe : read_pipe,
                           &tids[i]) != 0)
            return 2;
    int failed = 0;
    for (int i = 0; i < threads; i++) {
        void* result = nullptr;
        pthread_join(t[i], &result);
        failed += result != nullptr;
    }
    return failed ? 3 : 0;
}

// Contentions per lock address ("0xffff...", as the tool writes it), from the trace's lines,
// paired per thread.
std::map<std::string, std::uint64_t> contentions(const std::vector<std::string>& lines,
                                                 std::uint64_t& begins)
{
    static const std::regex event(
        R"(^\s*.*-(\d+)\s+\[\d+\].*: contention_(begin|end): (?:0x)?([0-9a-f]+) )");
    std::map<std::string, std::vector<std::string>> pending; // per thread, innermost last
    std::map<std::string, std::uint64_t> counts;
    begins = 0;
    for (const auto& line : lines) {
        std::smatch m;
        if (!std::regex_search(line, m, event)) {
            ADD_FAILURE() << "not a contention event: " << line;
            continue;
        }
        auto& stack = pending[m[1]];
        const std::string lock = "0x" + m[3].str(); // the kernel prints %p without 0x
        if (m[2] == "begin") {
            begins++;
            if (stack.empty() || stack.back() != lock)
                stack.push_back(lock);
            continue;
        }
        for (auto it = stack.rbegin(); it != stack.rend(); ++it)
            if (*it == lock) {
                EXPECT_TRUE(it == stack.rbegin()) << "an inner contention never ended: " << line;
                stack.erase(std::prev(it.base()), stack.end());
                counts[lock]++;
                break;
            }
    }
    for (const auto& [tid, stack] : pending)
        EXPECT_TRUE(stack.empty()) << "thread " << tid << " ended inside a contention";
    return counts;
}

// The trace instance's buffers lost nothing ("overrun: 0" on every CPU).
void expect_no_overrun(const tpkit::live::TraceInstance& trace)
{
    for (const auto& cpu : std::filesystem::directory_iterator(trace.dir() / "per_cpu")) {
        std::ifstream stats(cpu.path() / "stats");
        for (std::string line; std::getline(stats, line);)
            if (line.starts_with("overrun:"))
                EXPECT_EQ(line, "overrun: 0") << cpu.path();
    }
}

} // namespace klocks

TEST(KlockstatExact, ContentionsPerLockAreTheKernelTraces)
{
    TPKIT_REQUIRE_LIVE();
    klocks::tids = static_cast<pid_t*>(mmap(nullptr, klocks::threads * sizeof(pid_t),
                                             PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(klocks::tids, MAP_FAILED);
    tpkit::live::ScriptedChild child(klocks::comm, {}, klocks::contend);

    ToolRun tool({tpkit::live::tool_path("klockstat"), "-p", std::to_string(child.pid()), "--by-lock",
                  "--json"});
    ASSERT_TRUE(tool.wait_until_attached(2, 20s)) << tool.stderr_text();

    std::vector<std::string> kernel_lines;
    {
        tpkit::live::TraceInstance trace("klockstat");
        trace.set_option("hash-ptr", "0");
        std::ofstream(trace.dir() / "buffer_size_kb") << "32768" << std::flush;
        for (const char* event : {"contention_begin", "contention_end"}) {
            ASSERT_EQ(trace.set_filter("lock", event, std::string("COMM == \"") + klocks::comm + "\""), "");
            trace.enable("lock", event, true);
        }
        tpkit::live::FreedTaskWatch freed(klocks::comm);
        ASSERT_EQ(child.go_and_wait(), 0);
        // A thread still contends for locks after its join returns (its exit, its last switch):
        // both tracers stay on until every one of them is freed, the kernel's stopping first.
        for (int i = 0; i < klocks::threads; i++)
            ASSERT_TRUE(freed.wait(klocks::tids[i], tpkit::live::patient(10s)))
                << "thread " << klocks::tids[i] << " was never freed";
        for (const char* event : {"contention_begin", "contention_end"})
            trace.enable("lock", event, false);
        klocks::expect_no_overrun(trace);
        kernel_lines = trace.take_lines();
    }
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    std::uint64_t begins = 0;
    const auto expected = klocks::contentions(kernel_lines, begins);
    std::map<std::string, std::uint64_t> counted;
    std::map<std::string, std::uint64_t> types; // contentions per lock type, for the record
    std::uint64_t total = 0;
    for (const auto& line : tool.lines()) {
        auto o = tpkit::live::parse_flat_json(line);
        if (o["type"] != "count")
            continue;
        counted[o["lock"]] += std::stoull(o["count"]);
        total += std::stoull(o["count"]);
        types[o["lock_type"]] += std::stoull(o["count"]);
        EXPECT_LE(std::stoull(o["max_ns"]), std::stoull(o["total_ns"])) << line;
        EXPECT_FALSE(o["lock_type"].empty()) << line;
    }
    // Runs the kernel skipped (another BPF program running on the CPU) are the only allowance,
    // each said on stderr; nothing else may be said.
    const std::uint64_t skipped = tpkit::live::skipped_runs(tool.stderr_text());
    if (skipped == 0) {
        EXPECT_EQ(tool.stderr_text(), "");
        EXPECT_EQ(counted, expected);
    } else {
        std::uint64_t differ = 0;
        for (const auto& [lock, n] : expected)
            differ += n > counted[lock] ? n - counted[lock] : counted[lock] - n;
        EXPECT_LE(differ, skipped) << tool.stderr_text();
    }
    EXPECT_GT(total, 0u) << "no contention: " << begins << " begins in the kernel's trace";
    std::cout << "klockstat: " << total << " contentions on " << counted.size() << " locks; "
              << begins << " begins, " << kernel_lines.size() << " lines in the kernel's trace;";
    for (const auto& [type, n] : types)
        std::cout << " " << type << " " << n;
    std::cout << "\n";
}

// The pairing itself, with contentions the kernel seldom makes on demand: the programs run by
// BPF_PROG_TEST_RUN in this thread, each with the arguments the tracepoint would give.
namespace klocks {

constexpr std::uint64_t mutex_lock = 0xffff888000001000, wait_lock = 0xffff888000001008,
                        irq_lock = 0xffff888000002000;

void run(bpf_program* prog, std::uint64_t lock, std::uint64_t arg)
{
    std::uint64_t args[2] = {lock, arg};
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));
    ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(prog), &opts), 0) << strerror(errno);
}

} // namespace klocks

TEST(KlockstatExact, NestedContentionsArePairedPerThread)
{
    TPKIT_REQUIRE_LIVE();
    klockstat_bpf* skel = klockstat_bpf__open();
    ASSERT_NE(skel, nullptr);
    skel->rodata->by_lock = true;
    // The halves are sized by user space (one key each as declared).
    ASSERT_EQ(bpf_map__set_max_entries(skel->maps.waits_a, 64), 0);
    ASSERT_EQ(bpf_map__set_max_entries(skel->maps.waits_b, 64), 0);
    ASSERT_EQ(klockstat_bpf__load(skel), 0);
    auto* begin = skel->progs.wait_begin;
    auto* end = skel->progs.wait_end;
    // A mutex's wait: it spins, its wait_lock is contended (twice), an interrupt contends for
    // a spinlock, it sleeps (a second begin of the mutex), and it ends once.
    klocks::run(begin, klocks::mutex_lock, KLOCKSTAT_F_MUTEX | KLOCKSTAT_F_SPIN);
    klocks::run(begin, klocks::wait_lock, KLOCKSTAT_F_SPIN);
    klocks::run(end, klocks::wait_lock, 0);
    klocks::run(begin, klocks::wait_lock, KLOCKSTAT_F_SPIN);
    klocks::run(begin, klocks::irq_lock, KLOCKSTAT_F_SPIN);
    klocks::run(end, klocks::irq_lock, 0);
    klocks::run(end, klocks::wait_lock, 0);
    klocks::run(begin, klocks::mutex_lock, KLOCKSTAT_F_MUTEX);
    klocks::run(end, klocks::mutex_lock, 0);
    // An end whose begin was not seen (before the tool attached) counts nothing.
    klocks::run(end, klocks::irq_lock, 0);

    std::map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>> counted; // flags, count
    const int fd = bpf_map__fd(skel->maps.waits_a);
    klockstat_key key{}, next{};
    for (void* prev = nullptr; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
        key = next;
        klockstat_value value{};
        ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &value), 0);
        counted[key.lock].first |= key.flags;
        counted[key.lock].second += value.count;
    }
    using Counted = std::map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>>;
    EXPECT_EQ(counted, (Counted{{klocks::mutex_lock, {KLOCKSTAT_F_MUTEX | KLOCKSTAT_F_SPIN, 1}},
                                {klocks::wait_lock, {KLOCKSTAT_F_SPIN, 2}},
                                {klocks::irq_lock, {KLOCKSTAT_F_SPIN, 1}}}));
    // Nothing pending is left for this thread.
    const std::uint32_t tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
    klockstat_value ignored;
    EXPECT_NE(bpf_map_lookup_elem(bpf_map__fd(skel->maps.pending), &tid, &ignored), 0);
    klockstat_bpf__destroy(skel);
}

TEST(KlockstatLive, BadOptionsAreUsageErrors)
{
    for (std::vector<std::string> args :
         {std::vector<std::string>{"-S", "hld_max"}, {"-S", "acq_bogus"}, {"-P", "-s", "3"},
          {"-L", "0xzz"}, {"-L", "no_such_kernel_symbol_tpkit"}, {"-n", "0"}}) {
        args.insert(args.begin(), tpkit::live::tool_path("klockstat"));
        ToolRun run(args);
        EXPECT_EQ(run.wait(10s), 2) << args[1] << ": " << run.stderr_text();
        EXPECT_EQ(run.stderr_text().rfind("klockstat: ", 0), 0u) << run.stderr_text();
        EXPECT_EQ(std::count(run.stderr_text().begin(), run.stderr_text().end(), '\n'), 1);
    }
}
