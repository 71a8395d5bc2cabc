// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpbench: tpkit side by side with hand-written libbpf floors, bpftrace, libbpf-tools and perf.
//
// Every comparison runs in one invocation, interleaved (the order rotates every round), several
// rounds; figures are medians, and costs are differences and ratios within a round, because
// the machine is noisy and absolute times do not compare across runs. Prints Markdown tables
// and writes every run as JSON. --smoke: tiny sizes, one round, checks that every contender
// runs and yields numbers (and that streaming counts add up exactly).
#include "process.hpp"

#include <tpkit/engine/engine.hpp>
#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/support/json.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <fcntl.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using tpbench::MemFile;
using tpbench::Process;
using namespace std::chrono_literals;

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

// One step of a rate sweep: the events per second asked of the workload, made by this many
// producer threads of the traced process (one producer cannot go past its CPU).
struct SweepStep {
    std::uint64_t rate;
    int threads = 1;
};

struct Config {
    bool smoke = false;
    fs::path bin_dir;   // tpkit's tools
    fs::path bench_dir; // tpbench-work, tpbench-floor
    fs::path out;
    int rounds = 5;
    int stream_rounds = 3;
    std::uint64_t read_ops = 1'000'000;
    std::uint64_t stream_ops = 2'000'000;
    // Streamers that wake the reader for every event (perf buffers, bpftrace's printf) cost
    // 7-18 µs per event here: a tenth of the burst gives the same per-event figure.
    std::uint64_t slow_stream_ops = 200'000;
    std::uint64_t fork_ops = 2'000;
    std::uint64_t syscall_ops = 2'000'000;
    std::uint64_t switch_ops = 200'000;
    std::uint64_t blockio_ops = 20'000;
    std::uint64_t connect_ops = 5'000; // each leaves a TIME_WAIT socket and port behind
    // Past capacity: well beyond a 4 MiB ring (~40k tpsnoop events) and 64-page perf buffers.
    std::uint64_t drop_ops = 200'000;
    std::uint64_t slow_drop_ops = 20'000;
    double fixed_seconds = 1;
    // Syscall events (read(), openat()). Where one producer cannot make a rate, the step is
    // made again by one producer thread more, up to one on each CPU.
    std::vector<std::uint64_t> rates{12'500,  25'000,    50'000,    100'000,   200'000,  400'000,
                                     800'000, 1'600'000, 2'400'000, 3'200'000, 4'800'000};
    // A fork takes ~150 µs here: its own steps.
    std::vector<std::uint64_t> fork_rates{1'000, 2'000, 4'000, 8'000, 16'000, 32'000};
    int first_producers = 1;
    double rate_seconds = 1;
    // keys: tpcount and tphist --by with 10, 1k, 100k keys, drained every key_interval seconds.
    std::vector<std::uint64_t> key_counts{10, 1'000, 100'000};
    std::vector<std::uint64_t> key_procs{10, 1'000};
    std::uint64_t key_ops = 3'000'000;
    std::uint64_t key_rate = 1'000'000; // --by count: paced, so that every interval sees every key
    double key_interval = 0.5;
    // glob-scale: tpcount with every sys_enter_* event --classic detaches ~360 tracepoints
    // (~14 s): fewer rounds for it.
    int glob_all_classic_rounds = 1;
    // --soak: each streamer under a steady storm for this long, its RSS and descriptors at the
    // start and at the end, its counts exact.
    bool soak = false;
    double soak_seconds = 600;
    std::uint64_t soak_read_rate = 20'000;
    std::uint64_t soak_fork_rate = 1'000;
    std::vector<std::string> only; // parts to run; empty: all
    bool runs(std::string_view part) const
    {
        return only.empty() || std::find(only.begin(), only.end(), part) != only.end();
    }
};

// How a contender tells what it delivered and lost.
// hist_json: tpkit histograms (--json), every bucket's count delivered, nothing lost.
enum class Counting { none, tpkit_json, floor_json, bpftrace_json, perf_stat, hist_json };

struct Contender {
    std::string id;
    std::string label;
    std::string family; // none, floor, tpkit, bpftrace, libbpf-tools, perf
    std::string attach;
    std::vector<std::string> argv; // "{pid}" → the workload's pid; empty: no tracing
    int programs = 1;              // tracepoint programs to wait for; 0: perf counters
    Counting counting = Counting::none;
    std::uint64_t ops = 0; // workload size when not the scenario's
    std::string missing;   // why it cannot run here
};

struct Run {
    bool ok = false;
    std::string error;
    double ns_per_op = nan_value;
    double elapsed_s = nan_value;
    std::uint64_t ops = 0;
    std::optional<std::uint64_t> delivered, lost;
    std::optional<tpbench::BpfRunStats::Sample> bpf;
    // The tool's resident memory and open descriptors once attached and once the workload is
    // done (before the stop signal).
    std::optional<tpbench::Usage> usage_start, usage_end;
    // Interval outputs (distinct time_ns) the tool had printed at usage_start and usage_end.
    std::size_t intervals_start = 0, intervals_end = 0;
    // Events the tool said on stderr it did not count ("N events not counted: …").
    std::uint64_t said_not_counted = 0;
    double peak_rss_mib = nan_value;
    bool exact() const { return delivered && lost && *delivered + *lost == ops; }
};

struct Scenario {
    std::string id;
    std::string title;
    std::string workload; // read | fork | syscall | switch (a pipe round trip)
    std::uint64_t ops;
    int rounds;
    std::vector<Contender> contenders; // the first is "none"
    // The tool's stdout is a pipe read only once the workload is done: the reader stalls, the
    // buffer overflows, and the drops must be counted exactly.
    bool stalled_reader = false;
    // The contender the ratios are to; empty: the scenario's floor.
    std::string reference = {};
};

struct ContenderResult {
    std::vector<Run> rounds;
    std::optional<Run> stats; // one more run with BPF run-time statistics
};

// ---------------------------------------------------------------------------------------------
// Running one workload under one contender

std::string replace_all(std::string text, std::string_view from, std::string_view to)
{
    for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
        text.replace(at, from.size(), to);
    return text;
}

std::optional<std::uint64_t> number_after(std::string_view line, std::string_view key)
{
    std::size_t at = line.find(key);
    if (at == std::string_view::npos)
        return std::nullopt;
    at += key.size();
    while (at < line.size() && line[at] == ' ')
        at++;
    std::uint64_t v = 0;
    bool any = false;
    for (; at < line.size() && line[at] >= '0' && line[at] <= '9'; at++, any = true)
        v = v * 10 + static_cast<std::uint64_t>(line[at] - '0');
    return any ? std::optional(v) : std::nullopt;
}

void count_events(const Contender& c, const MemFile& out, const MemFile& err, Run& run)
{
    std::uint64_t delivered = 0, lost = 0;
    switch (c.counting) {
    case Counting::none:
        return;
    case Counting::tpkit_json: // one object per event, then {"type":"lost","lost_events":N}
        out.for_each_line([&](std::string_view line) {
            if (auto n = number_after(line, "{\"type\":\"lost\",\"lost_events\":"))
                lost += *n;
            else if (!line.empty() && line[0] == '{')
                delivered++;
        });
        break;
    case Counting::floor_json:
        out.for_each_line([&](std::string_view line) {
            delivered += number_after(line, "\"delivered\":").value_or(0);
            lost += number_after(line, "\"lost_events\":").value_or(0);
        });
        break;
    case Counting::bpftrace_json:
        out.for_each_line([&](std::string_view line) {
            if (line.find("\"type\": \"printf\"") != std::string_view::npos)
                delivered++;
            else if (line.find("\"type\": \"lost_events\"") != std::string_view::npos)
                lost += number_after(line, "\"events\":").value_or(0);
        });
        break;
    case Counting::hist_json: // {"buckets":[{"low":…,"high":…,"count":N},…],…} or tpcount's
                              // {"type":"count",…,"count":N}; keys not counted in {"type":"lost",…}
        out.for_each_line([&](std::string_view line) {
            if (line.starts_with("{\"type\":\"lost\"")) {
                lost += number_after(line, "\"lost_events\":").value_or(0);
                return;
            }
            // A histogram's total (a key may be a field named count: "count":KEY).
            if (line.starts_with("{\"type\":\"hist\"")) {
                delivered += number_after(line, "\"total\":").value_or(0);
                return;
            }
            for (std::size_t at = line.find("\"count\":"); at != std::string_view::npos;
                 at = line.find("\"count\":", at + 1))
                delivered += number_after(line.substr(at), "\"count\":").value_or(0);
        });
        break;
    case Counting::perf_stat: // -x, : "COUNT,,EVENT,..."
        err.for_each_line([&](std::string_view line) {
            if (line.find(",,") != std::string_view::npos && !line.empty() &&
                line[0] >= '0' && line[0] <= '9')
                delivered += number_after(line, "").value_or(0);
        });
        break;
    }
    // A tpkit streamer whose stdout is not read keeps reading its buffer and drops the output
    // past its backlog, counted on stderr: accounted for, not delivered.
    if (c.counting == Counting::tpkit_json)
        err.for_each_line([&](std::string_view line) {
            if (line.find(" lines of output not written") != std::string_view::npos)
                if (auto colon = line.find(": "); colon != std::string_view::npos)
                    lost += number_after(line.substr(colon + 2), "").value_or(0);
        });
    run.delivered = delivered;
    run.lost = lost;
    err.for_each_line([&](std::string_view line) {
        if (line.find(" events not counted") != std::string_view::npos)
            if (auto colon = line.find(": "); colon != std::string_view::npos)
                run.said_not_counted += number_after(line.substr(colon + 2), "").value_or(0);
    });
}

// The interval outputs of an aggregating tool's --json so far: its distinct time_ns.
std::size_t intervals_printed(const MemFile& out)
{
    std::size_t n = 0;
    std::uint64_t last = 0;
    out.for_each_line([&](std::string_view line) {
        auto t = number_after(line, "\"time_ns\":");
        if (t && *t != last) {
            n++;
            last = *t;
        }
    });
    return n;
}

// work_args: more of tpbench-work's options (--threads, --keys, --procs).
Run run_once(const Config& cfg, const Contender& c, const std::string& workload,
             std::uint64_t ops, std::uint64_t rate, bool with_stats, bool stalled_reader = false,
             const std::vector<std::string>& work_args = {})
{
    Run run;
    run.ops = ops;
    MemFile work_out, work_err, tool_out, tool_err;
    std::vector<std::string> work_argv{(cfg.bench_dir / "tpbench-work").string(), workload,
                                       std::to_string(ops)};
    if (rate)
        work_argv.insert(work_argv.end(), {"--rate", std::to_string(rate)});
    work_argv.insert(work_argv.end(), work_args.begin(), work_args.end());
    Process work(work_argv, work_out, work_err);
    if (!tpbench::wait_ready_signal(work, 10s)) {
        run.error = "workload did not start: " + work_err.head();
        return run;
    }

    std::optional<Process> tool;
    tpbench::Attachments attached;
    int stalled_pipe = -1;
    struct CloseFd {
        int& fd;
        ~CloseFd()
        {
            if (fd >= 0)
                close(fd);
        }
    } close_pipe{stalled_pipe};
    if (!c.argv.empty()) {
        std::vector<std::string> argv;
        for (const auto& a : c.argv)
            argv.push_back(replace_all(a, "{pid}", std::to_string(work.pid())));
        int pipe_fds[2] = {-1, -1};
        if (stalled_reader && pipe2(pipe_fds, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe2 failed");
        tool.emplace(argv, stalled_reader ? pipe_fds[1] : tool_out.fd(), tool_err.fd());
        if (stalled_reader) {
            close(pipe_fds[1]);
            stalled_pipe = pipe_fds[0];
        }
        if (!tpbench::wait_attached(*tool, c.programs, 30s, attached)) {
            auto f = tool->wait(2s);
            run.error = fmt::format("not attached ({}): {}", f.describe(), tool_err.head(300));
            return run;
        }
    }
    if (tool) {
        run.usage_start = tpbench::usage_of(tool->pid());
        if (c.counting == Counting::hist_json)
            run.intervals_start = intervals_printed(tool_out);
    }
    std::optional<tpbench::BpfRunStats> stats;
    tpbench::BpfRunStats::Sample before;
    if (with_stats && !attached.prog_ids.empty()) {
        stats.emplace();
        before = tpbench::BpfRunStats::sample(attached.prog_ids);
    }

    work.signal(SIGUSR1);
    auto work_done = work.wait(600s);
    if (stats && stats->enabled()) {
        auto after = tpbench::BpfRunStats::sample(attached.prog_ids);
        run.bpf = tpbench::BpfRunStats::Sample{after.run_time_ns - before.run_time_ns,
                                              after.run_cnt - before.run_cnt};
    }
    stats.reset();
    if (!work_done.ok()) {
        run.error = fmt::format("workload: {}: {}", work_done.describe(), work_err.head(300));
        return run;
    }
    work_out.for_each_line([&](std::string_view line) {
        // The median chunk: robust against the moments other tasks took the CPU.
        constexpr std::string_view key = "chunk_median_ns_per_op=";
        if (auto pos = line.find(key); pos != std::string_view::npos)
            run.ns_per_op = std::strtod(std::string(line.substr(pos + key.size())).c_str(), nullptr);
        if (auto ns = number_after(line, "elapsed_ns="))
            run.elapsed_s = static_cast<double>(*ns) / 1e9;
    });
    if (tool) {
        run.usage_end = tpbench::usage_of(tool->pid());
        if (c.counting == Counting::hist_json)
            run.intervals_end = intervals_printed(tool_out);
        tool->signal(SIGINT);
        if (stalled_pipe >= 0)
            tool_out.append_until_eof(stalled_pipe); // the reader catches up only now
        auto f = tool->wait(120s);
        // perf stat re-raises the SIGINT that stops it, after printing its counts.
        bool perf_stopped = c.family == "perf" && !f.exited && f.code == SIGINT;
        if (!f.ok() && !perf_stopped) {
            run.error = fmt::format("{}: {}", f.describe(), tool_err.head(300));
            return run;
        }
        run.peak_rss_mib = f.max_rss_mib;
        count_events(c, tool_out, tool_err, run);
    }
    run.ok = std::isfinite(run.ns_per_op) && run.ns_per_op > 0;
    if (!run.ok)
        run.error = "no figure from the workload: " + work_out.head(200);
    return run;
}

// ---------------------------------------------------------------------------------------------
// Statistics

double median(std::vector<double> v)
{
    std::erase_if(v, [](double x) { return !std::isfinite(x); });
    if (v.empty())
        return nan_value;
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Summary {
    double ns_per_op = nan_value;
    double added = nan_value; // median over rounds of (traced - untraced in the same round)
    double added_min = nan_value, added_max = nan_value;
    std::vector<double> added_by_round;
    double bpf_ns_per_op = nan_value;
    double bpf_runs_per_op = nan_value;
    std::uint64_t lost_max = 0;
    std::uint64_t delivered_min = std::numeric_limits<std::uint64_t>::max();
    bool counted = false;
    bool all_exact = true;
    bool all_ok = true;
    std::string error;
};

Summary summarize(const ContenderResult& r, const ContenderResult& none)
{
    Summary s;
    std::vector<double> ns;
    for (std::size_t i = 0; i < r.rounds.size(); i++) {
        const Run& run = r.rounds[i];
        if (!run.ok) {
            s.all_ok = false;
            s.error = run.error;
            s.added_by_round.push_back(nan_value);
            continue;
        }
        ns.push_back(run.ns_per_op);
        double base = i < none.rounds.size() && none.rounds[i].ok ? none.rounds[i].ns_per_op
                                                                   : nan_value;
        s.added_by_round.push_back(run.ns_per_op - base);
        if (run.delivered) {
            s.counted = true;
            s.lost_max = std::max(s.lost_max, *run.lost);
            s.delivered_min = std::min(s.delivered_min, *run.delivered);
            s.all_exact = s.all_exact && run.exact();
        }
    }
    s.ns_per_op = median(ns);
    s.added = median(s.added_by_round);
    for (double a : s.added_by_round) {
        if (!std::isfinite(a))
            continue;
        s.added_min = std::isfinite(s.added_min) ? std::min(s.added_min, a) : a;
        s.added_max = std::isfinite(s.added_max) ? std::max(s.added_max, a) : a;
    }
    if (r.stats && r.stats->ok && r.stats->bpf && r.stats->ops) {
        s.bpf_ns_per_op = static_cast<double>(r.stats->bpf->run_time_ns) / r.stats->ops;
        s.bpf_runs_per_op = static_cast<double>(r.stats->bpf->run_cnt) / r.stats->ops;
    }
    return s;
}

// Median over rounds of added(a) / added(b): both measured in the same round.
double ratio(const Summary& a, const Summary& b)
{
    std::vector<double> v;
    for (std::size_t i = 0; i < a.added_by_round.size() && i < b.added_by_round.size(); i++)
        if (a.added_by_round[i] > 0 && b.added_by_round[i] > 0)
            v.push_back(a.added_by_round[i] / b.added_by_round[i]);
    // Mostly negative differences: the cost is below this workload's noise.
    if (v.size() * 2 < a.added_by_round.size())
        return nan_value;
    return median(v);
}

std::string num(double v, int decimals = 0)
{
    return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : "–";
}

std::string json_num(double v)
{
    return std::isfinite(v) ? fmt::format("{:.3f}", v) : "null";
}

// ---------------------------------------------------------------------------------------------
// Contenders

struct Programs {
    std::string bpftrace, perf, syscount, runqlat, cpudist, offcputime, wakeuptime;
    // libbpf-tools of the block, interrupt and TCP suite
    std::string biolatency, bitesize, biopattern, hardirqs, softirqs, tcpstates, tcplife;
};

// Why the blockio workload cannot run here (empty: it can): its O_DIRECT reads need a
// filesystem on a block device under /var/tmp.
std::string blockio_unavailable()
{
    const std::string path = fmt::format("/var/tmp/tpbench-probe.{}", getpid());
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_DIRECT, 0600);
    if (fd < 0)
        return fmt::format("no O_DIRECT file in /var/tmp ({})", std::strerror(errno));
    close(fd);
    unlink(path.c_str());
    return {};
}

Contender none()
{
    return {"none", "no tracing", "none", "–", {}, 0, Counting::none, 0, {}};
}

Contender external(std::string id, std::string label, std::string family, std::string attach,
                   const std::string& program, std::vector<std::string> args, int programs,
                   Counting counting, std::uint64_t ops = 0)
{
    Contender c{std::move(id), std::move(label), std::move(family), std::move(attach), {},
                programs, counting, ops, {}};
    if (program.empty()) {
        c.missing = "not installed";
        return c;
    }
    c.argv.push_back(program);
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    return c;
}

std::string bpftrace_until_exit(const std::string& probe, double seconds)
{
    return fmt::format("{} interval:ms:{} {{ exit(); }}", probe,
                       static_cast<long>(std::lround(seconds * 1000)));
}

// The kernel's syscalls:sys_enter_* events, sys_enter_read first: counting the first N counts
// read() and watches N - 1 other syscalls.
std::vector<std::string> syscall_enter_events()
{
    std::vector<std::string> names;
    try {
        for (const auto& e : tpkit::list_events(tpkit::live_events_root(), "syscalls:sys_enter_*"))
            names.push_back(e.str());
    } catch (const std::exception&) {
        return {};
    }
    auto read = std::find(names.begin(), names.end(), "syscalls:sys_enter_read");
    if (read == names.end())
        return {};
    std::rotate(names.begin(), read, read + 1);
    return names;
}

std::vector<Scenario> scenarios(const Config& cfg, const Programs& p)
{
    std::string floor = (cfg.bench_dir / "tpbench-floor").string();
    auto tool = [&](const char* name) { return (cfg.bin_dir / name).string(); };
    std::vector<Scenario> out;

    out.push_back({"read-hist",
                   "Per-event overhead: histogram / count of read() sizes, read() of 1..4096 B",
                   "read", cfg.read_ops, cfg.rounds,
                   {none(),
                    external("floor-hist-tp", "floor: log2 hist, tracepoint", "floor",
                             "tracepoint", floor, {"hist-tp"}, 1, Counting::none),
                    external("floor-hist-raw", "floor: log2 hist, raw_tp sys_enter + id check",
                             "floor", "raw_tp", floor, {"hist-raw"}, 1, Counting::none),
                    external("tphist", "tphist syscalls:sys_enter_read count", "tpkit",
                             "raw_tp", tool("tphist"), {"syscalls:sys_enter_read", "count"},
                             1, Counting::none),
                    external("tphist-classic", "tphist syscalls:sys_enter_read count --classic",
                             "tpkit", "tracepoint", tool("tphist"),
                             {"syscalls:sys_enter_read", "count", "--classic"}, 1, Counting::none),
                    external("tpcount", "tpcount syscalls:sys_enter_read", "tpkit", "raw_tp",
                             tool("tpcount"), {"syscalls:sys_enter_read"}, 1, Counting::none),
                    external("tpcount-classic", "tpcount syscalls:sys_enter_read --classic",
                             "tpkit", "tracepoint", tool("tpcount"),
                             {"syscalls:sys_enter_read", "--classic"}, 1, Counting::none),
                    external("bpftrace-hist", "bpftrace @ = hist(args->count)", "bpftrace",
                             "tracepoint", p.bpftrace,
                             {"-e", "tracepoint:syscalls:sys_enter_read { @ = hist(args->count); }"},
                             1, Counting::none),
                    external("bpftrace-count", "bpftrace @ = count()", "bpftrace", "tracepoint",
                             p.bpftrace,
                             {"-e", "tracepoint:syscalls:sys_enter_read { @ = count(); }"}, 1,
                             Counting::none),
                    external("syscount", "libbpf-tools syscount (counts every syscall at sys_exit)",
                             "libbpf-tools", "tracepoint", p.syscount, {}, 1, Counting::none),
                    external("perf-stat", "perf stat -e syscalls:sys_enter_read -p PID", "perf",
                             "perf counter", p.perf,
                             {"stat", "-x,", "-e", "syscalls:sys_enter_read", "-p", "{pid}"}, 0,
                             Counting::perf_stat)}});

    std::string printf_read =
        R"(tracepoint:syscalls:sys_enter_read /pid == {pid}/ { printf("%d %d %d\n", tid, args->fd, args->count); })";
    out.push_back({"read-stream",
                   "Streaming every read() of one process (-p), burst at full speed",
                   "read", cfg.stream_ops, cfg.stream_rounds,
                   {none(),
                    external("floor-ring-wake", "floor: ring buffer, wake-up per event", "floor",
                             "tracepoint", floor, {"stream-read", "--wakeup-each", "-p", "{pid}"}, 1,
                             Counting::floor_json),
                    external("floor-ring", "floor: ring buffer, no wake-up, 1 ms consume",
                             "floor", "tracepoint", floor, {"stream-read", "-p", "{pid}"}, 1,
                             Counting::floor_json),
                    external("floor-perf", "floor: perf buffer", "floor", "tracepoint", floor,
                             {"stream-read", "--perf-buffer", "-p", "{pid}"}, 1,
                             Counting::floor_json, cfg.slow_stream_ops),
                    external("tpsnoop", "tpsnoop syscalls:sys_enter_read -p PID --json", "tpkit",
                             "raw_tp", tool("tpsnoop"),
                             {"syscalls:sys_enter_read", "-p", "{pid}", "--json"}, 1,
                             Counting::tpkit_json),
                    external("tpsnoop-classic", "tpsnoop ... --classic", "tpkit", "tracepoint",
                             tool("tpsnoop"),
                             {"syscalls:sys_enter_read", "-p", "{pid}", "--json", "--classic"}, 1,
                             Counting::tpkit_json),
                    external("tpsnoop-perf", "tpsnoop ... --perf-buffer", "tpkit", "raw_tp",
                             tool("tpsnoop"),
                             {"syscalls:sys_enter_read", "-p", "{pid}", "--json", "--perf-buffer"},
                             1, Counting::tpkit_json, cfg.slow_stream_ops),
                    external("bpftrace-printf", "bpftrace printf", "bpftrace", "tracepoint",
                             p.bpftrace, {"-f", "json", "-e", printf_read}, 1,
                             Counting::bpftrace_json, cfg.slow_stream_ops)}});

    out.push_back({"drops",
                   "Past capacity: the reader stalls (stdout not read until the end), drops must "
                   "be counted exactly",
                   "read", cfg.drop_ops, 1,
                   {none(),
                    external("floor-ring", "floor: ring buffer, reader stalled (--stall)",
                             "floor", "tracepoint", floor, {"stream-read", "--stall", "-p", "{pid}"},
                             1, Counting::floor_json),
                    external("floor-perf", "floor: perf buffer, reader stalled (--stall)",
                             "floor", "tracepoint", floor,
                             {"stream-read", "--perf-buffer", "--stall", "-p", "{pid}"}, 1,
                             Counting::floor_json, cfg.slow_drop_ops),
                    external("tpsnoop", "tpsnoop syscalls:sys_enter_read -p PID --json", "tpkit",
                             "tracepoint", tool("tpsnoop"),
                             {"syscalls:sys_enter_read", "-p", "{pid}", "--json"}, 1,
                             Counting::tpkit_json),
                    external("tpsnoop-perf", "tpsnoop ... --perf-buffer", "tpkit", "tracepoint",
                             tool("tpsnoop"),
                             {"syscalls:sys_enter_read", "-p", "{pid}", "--json", "--perf-buffer"},
                             1, Counting::tpkit_json, cfg.slow_drop_ops),
                    external("bpftrace-printf", "bpftrace printf", "bpftrace", "tracepoint",
                             p.bpftrace, {"-f", "json", "-e", printf_read}, 1,
                             Counting::bpftrace_json, cfg.slow_drop_ops)},
                   true});

    out.push_back({"fork-stream", "Streaming every fork() of one process (-p)", "fork",
                   cfg.fork_ops, cfg.rounds,
                   {none(),
                    external("floor-ring", "floor: ring buffer, no wake-up, 1 ms consume",
                             "floor", "tracepoint", floor, {"stream-fork", "-p", "{pid}"}, 1,
                             Counting::floor_json),
                    external("floor-perf", "floor: perf buffer", "floor", "tracepoint", floor,
                             {"stream-fork", "--perf-buffer", "-p", "{pid}"}, 1,
                             Counting::floor_json),
                    external("forksnoop", "forksnoop -p PID --json", "tpkit", "tracepoint",
                             tool("forksnoop"), {"-p", "{pid}", "--json"}, 1, Counting::tpkit_json),
                    external("forksnoop-perf", "forksnoop ... --perf-buffer", "tpkit",
                             "tracepoint", tool("forksnoop"),
                             {"-p", "{pid}", "--json", "--perf-buffer"}, 1, Counting::tpkit_json),
                    external("forksnoop-raw", "forksnoop ... --raw", "tpkit", "raw_tp",
                             tool("forksnoop"), {"-p", "{pid}", "--json", "--raw"}, 1,
                             Counting::tpkit_json),
                    external("forksnoop-raw-perf", "forksnoop ... --raw --perf-buffer", "tpkit",
                             "raw_tp", tool("forksnoop"),
                             {"-p", "{pid}", "--json", "--raw", "--perf-buffer"}, 1,
                             Counting::tpkit_json),
                    external("tpsnoop", "tpsnoop sched:sched_process_fork -p PID --json", "tpkit",
                             "tracepoint", tool("tpsnoop"),
                             {"sched:sched_process_fork", "-p", "{pid}", "--json"}, 1,
                             Counting::tpkit_json),
                    external("bpftrace-printf", "bpftrace printf", "bpftrace", "tracepoint",
                             p.bpftrace,
                             {"-f", "json", "-e",
                              R"(tracepoint:sched:sched_process_fork /pid == {pid}/ { printf("%d %d\n", args->parent_pid, args->child_pid); })"},
                             1, Counting::bpftrace_json),
                    external("perf-stat", "perf stat -e sched:sched_process_fork -p PID", "perf",
                             "perf counter", p.perf,
                             {"stat", "-x,", "-e", "sched:sched_process_fork", "-p", "{pid}"}, 0,
                             Counting::perf_stat)}});

    // The cost of a counted read() as the number of syscall events counted grows: through one
    // raw_syscalls program picking events by number, and through a classic tracepoint each.
    Scenario scale{"syscall-scale",
                   "Per-event cost by number of syscall events counted: tpcount read() + N-1 "
                   "other sys_enter_* events, raw_syscalls vs classic tracepoints",
                   "read", cfg.read_ops, cfg.rounds, {none()}, false, "floor-hist-tp"};
    scale.contenders.push_back(external("floor-hist-tp", "floor: log2 hist, tracepoint", "floor",
                                        "tracepoint", floor, {"hist-tp"}, 1, Counting::none));
    auto enter_events = syscall_enter_events();
    for (std::size_t n : {std::size_t(1), std::size_t(10), std::size_t(100), enter_events.size()}) {
        // The smoke run leaves out the classic 100 and all: ~14 s to detach 360 tracepoints.
        if (n > enter_events.size() || (cfg.smoke && n > 10))
            continue;
        std::vector<std::string> events(enter_events.begin(), enter_events.begin() + n);
        std::string count = n == enter_events.size() ? "all" : std::to_string(n);
        for (bool classic : {false, true}) {
            auto args = events;
            if (classic)
                args.push_back("--classic");
            scale.contenders.push_back(external(
                fmt::format("tpcount-{}{}", count, classic ? "-classic" : ""),
                fmt::format("tpcount, {} sys_enter_* event{}{}", count, n == 1 ? "" : "s",
                            classic ? ", --classic" : ""),
                "tpkit", classic ? fmt::format("tracepoint ×{}", n) : "raw_tp", tool("tpcount"),
                args, classic ? static_cast<int>(n) : 1, Counting::none));
        }
    }
    out.push_back(scale);

    // What counting read() costs the other syscalls of the machine: a raw_syscalls program runs
    // at every syscall and looks its number up; a classic tracepoint's path tests a bit.
    out.push_back(
        {"syscall-untraced",
         "Cost to syscalls not traced: getppid() storm while read() is counted",
         "syscall", cfg.syscall_ops, cfg.rounds,
         {none(),
          external("floor-hist-tp", "floor: log2 hist of read(), tracepoint", "floor",
                   "tracepoint", floor, {"hist-tp"}, 1, Counting::none),
          external("floor-hist-raw", "floor: log2 hist of read(), raw_tp sys_enter + id check",
                   "floor", "raw_tp", floor, {"hist-raw"}, 1, Counting::none),
          external("tpcount", "tpcount syscalls:sys_enter_read", "tpkit", "raw_tp",
                   tool("tpcount"), {"syscalls:sys_enter_read"}, 1, Counting::none),
          external("tpcount-classic", "tpcount syscalls:sys_enter_read --classic", "tpkit",
                   "tracepoint", tool("tpcount"), {"syscalls:sys_enter_read", "--classic"}, 1,
                   Counting::none)},
         false, "floor-hist-tp"});

    // syscount against libbpf-tools' syscount, mode for mode: both count every syscall of the
    // machine, so a storm of the cheapest one shows the cost per syscall.
    Scenario syscalls{"syscall-count",
                      "Counting every syscall of the machine: syscount vs libbpf-tools syscount, "
                      "getppid() storm",
                      "syscall", cfg.syscall_ops, cfg.rounds, {none()}, false, "libbpf-syscount"};
    for (const auto& [suffix, args, programs] :
         std::vector<std::tuple<std::string, std::vector<std::string>, int>>{
             {"", {}, 1}, {" -L", {"-L"}, 2}, {" -P", {"-P"}, 1}, {" -x", {"-x"}, 1}}) {
        std::string id_suffix = suffix.empty() ? "" : "-" + suffix.substr(2);
        syscalls.contenders.push_back(external("syscount" + id_suffix, "syscount" + suffix, "tpkit",
                                               programs == 2 ? "raw_tp ×2" : "raw_tp",
                                               tool("syscount"), args, programs, Counting::none));
        syscalls.contenders.push_back(external("libbpf-syscount" + id_suffix,
                                               "libbpf-tools syscount" + suffix, "libbpf-tools",
                                               programs == 2 ? "tracepoint ×2" : "tracepoint",
                                               p.syscount, args, programs, Counting::none));
    }
    out.push_back(syscalls);

    // The scheduler, block, interrupt and TCP tools against libbpf-tools' same tools, each
    // tracing the whole machine under a storm of its events: pipe round trips on one CPU (two
    // wake-ups and context switches each), O_DIRECT reads (a block request and a completion
    // interrupt each), TCP connections on a private loopback (ten state changes each).
    struct PeerTool {
        std::string name, what, workload, attach;
        std::vector<std::string> tpkit_args, libbpf_args;
        int programs;
        std::string libbpf_program;
    };
    const std::string no_blockio = blockio_unavailable();
    for (const auto& t : std::vector<PeerTool>{
             {"runqlat", "run-queue latency histogram", "switch", "raw_tp ×3", {"60"}, {"60"}, 3,
              p.runqlat},
             {"cpudist", "on-CPU time histogram", "switch", "raw_tp", {"60"}, {"60"}, 1, p.cpudist},
             {"offcputime", "off-CPU time by stack", "switch", "raw_tp", {"-d", "60"}, {"60"}, 1,
              p.offcputime},
             {"wakeuptime", "blocked time by waker stack", "switch", "raw_tp ×2", {"-d", "60"},
              {"60"}, 2, p.wakeuptime},
             {"biolatency", "block I/O latency histogram", "blockio", "raw_tp ×2", {"60"}, {"60"},
              2, p.biolatency},
             {"bitesize", "I/O size histogram per process", "blockio", "raw_tp", {"60"}, {"60"}, 1,
              p.bitesize},
             {"biopattern", "random/sequential I/O per disk", "blockio", "raw_tp", {"60"}, {"60"},
              1, p.biopattern},
             {"hardirqs", "time in hard IRQ handlers", "blockio", "raw_tp ×2", {"60"}, {"60"}, 2,
              p.hardirqs},
             {"softirqs", "time in softirqs", "connect", "raw_tp ×2", {"60"}, {"60"}, 2,
              p.softirqs},
             {"tcpstates", "TCP state changes", "connect", "raw_tp", {}, {}, 1, p.tcpstates},
             {"tcplife", "TCP sessions", "connect", "raw_tp", {}, {}, 1, p.tcplife}}) {
        const bool switches = t.workload == "switch";
        const std::string storm = switches             ? "pipe round trips on one CPU"
                                  : t.workload == "blockio" ? "4 KiB O_DIRECT reads"
                                                            : "TCP connections on a private loopback";
        const std::string prefix = switches ? "sched-" : t.workload == "blockio" ? "block-" : "tcp-";
        const std::uint64_t ops = switches                  ? cfg.switch_ops
                                  : t.workload == "blockio" ? cfg.blockio_ops
                                                            : cfg.connect_ops;
        Scenario peer{prefix + t.name,
                      fmt::format("{}: {} vs libbpf-tools {}, {}", t.what, t.name, t.name, storm),
                      t.workload, ops, cfg.rounds, {none()}, false, "libbpf-" + t.name};
        peer.contenders.push_back(external(t.name, t.name, "tpkit", t.attach,
                                           tool(t.name.c_str()), t.tpkit_args, t.programs,
                                           Counting::none));
        peer.contenders.push_back(external("libbpf-" + t.name, "libbpf-tools " + t.name,
                                           "libbpf-tools", t.attach, t.libbpf_program,
                                           t.libbpf_args, t.programs, Counting::none));
        if (t.workload == "blockio" && !no_blockio.empty())
            for (auto& c : peer.contenders)
                c.missing = no_blockio;
        out.push_back(peer);
    }
    return out;
}

// The streaming tools of the rate sweep, by workload: read() (with the floor and bpftrace),
// openat(), fork().
std::vector<std::pair<std::string, std::vector<Contender>>> sweep_contenders(const Config& cfg,
                                                                             const Programs& p)
{
    auto tool = [&](const char* name) { return (cfg.bin_dir / name).string(); };
    std::vector<Contender> read;
    for (const Scenario& s : scenarios(cfg, p))
        if (s.id == "read-stream")
            for (const Contender& c : s.contenders)
                if (c.id == "floor-ring" || c.id == "tpsnoop" || c.id == "tpsnoop-perf" ||
                    c.id == "bpftrace-printf")
                    read.push_back(c);
    return {
        {"read", read},
        {"open",
         // Six classic tracepoints (open, openat, openat2; attached in that order): the first
         // four attached cover openat().
         {external("opensnoop", "opensnoop -p PID --json", "tpkit", "tracepoint ×6",
                   tool("opensnoop"), {"-p", "{pid}", "--json"}, 4, Counting::tpkit_json),
          external("tpsnoop-openat", "tpsnoop syscalls:sys_enter_openat -p PID --json", "tpkit",
                   "raw_tp", tool("tpsnoop"), {"syscalls:sys_enter_openat", "-p", "{pid}", "--json"},
                   1, Counting::tpkit_json)}},
        {"fork",
         {external("forksnoop", "forksnoop -p PID --json", "tpkit", "tracepoint",
                   tool("forksnoop"), {"-p", "{pid}", "--json"}, 1, Counting::tpkit_json),
          external("forksnoop-raw", "forksnoop -p PID --json --raw", "tpkit", "raw_tp",
                   tool("forksnoop"), {"-p", "{pid}", "--json", "--raw"}, 1, Counting::tpkit_json),
          external("tpsnoop-fork", "tpsnoop sched:sched_process_fork -p PID --json", "tpkit",
                   "tracepoint", tool("tpsnoop"),
                   {"sched:sched_process_fork", "-p", "{pid}", "--json"}, 1, Counting::tpkit_json)}},
    };
}

// keys: tpcount and tphist --by a key of 10, 1k or 100k values, drained and printed every
// key_interval seconds (--json). --by count: one process's read() sizes cycle over 1..K
// (tpbench-work --keys); --by pid: K child processes (tpbench-work --procs), picked out by their
// name (pid_max is 32768 here: 100k pids cannot live at once). Each map sized to hold the keys
// (--max-keys), and once 100k keys into the tool's default, where the keys that find the map
// full must be counted and reported.
struct KeyCase {
    Contender contender;
    std::string tool, by;
    std::uint64_t keys;
    std::uint32_t max_keys;
    std::vector<std::string> work_args;
    std::uint64_t rate; // 0: as fast as the producers go
};

std::vector<KeyCase> key_cases(const Config& cfg)
{
    std::vector<KeyCase> out;
    const std::string interval = fmt::format("{}", cfg.key_interval);
    for (const std::string name : {"tpcount", "tphist"}) {
        const std::uint32_t default_max = name == "tpcount" ? 10240 : 1024;
        auto add = [&](const std::string& by, std::uint64_t keys, std::uint32_t max_keys) {
            std::vector<std::string> args{"syscalls:sys_enter_read"};
            if (name == "tphist")
                args.push_back("count");
            args.insert(args.end(), {"--by", by, "--max-keys", std::to_string(max_keys), "--json"});
            if (by == "count")
                args.insert(args.end(), {"-p", "{pid}"});
            else
                args.insert(args.end(), {"--comm", "tpbk{pid}"});
            args.push_back(interval);
            std::string id = fmt::format("{}-{}-{}{}", name, by, keys,
                                         max_keys < keys ? "-full" : "");
            out.push_back({external(id, fmt::format("{} --by {}", name, by), "tpkit", "raw_tp",
                                    (cfg.bin_dir / name).string(), args, 1, Counting::hist_json),
                           name, by, keys, max_keys,
                           {by == "count" ? "--keys" : "--procs", std::to_string(keys)},
                           by == "count" ? cfg.key_rate : 0});
        };
        for (std::uint64_t k : cfg.key_counts)
            add("count", k, std::max<std::uint32_t>(static_cast<std::uint32_t>(k), default_max));
        if (!cfg.key_counts.empty() && cfg.key_counts.back() > default_max)
            add("count", cfg.key_counts.back(), default_max); // the map full
        for (std::uint64_t k : cfg.key_procs)
            add("pid", k, std::max<std::uint32_t>(static_cast<std::uint32_t>(k), default_max));
    }
    return out;
}

struct FixedContender {
    std::string id, label, family;
    std::vector<std::string> argv;
    double seconds;
    std::string missing;
    int programs = 1; // to time the start-up until attached; 0: perf counters
    int rounds = 0;   // at most this many rounds (a slow exit); 0: every round
    // No duration option: stopped with SIGINT `seconds` after its programs are attached, so
    // that wall − seconds is the start-up and the exit, as for the others.
    bool interrupt = false;
};

// PROGRAM ARGS as a contender; "not installed" when PROGRAM is empty.
FixedContender fixed_external(std::string id, std::string label, std::string family,
                              const std::string& program, const std::vector<std::string>& args,
                              double seconds)
{
    FixedContender c{std::move(id), std::move(label), std::move(family), {}, seconds, {}};
    if (program.empty())
        c.missing = "not installed";
    else {
        c.argv.push_back(program);
        c.argv.insert(c.argv.end(), args.begin(), args.end());
    }
    return c;
}

std::vector<FixedContender> fixed_contenders(const Config& cfg, const Programs& p)
{
    std::string d = fmt::format("{}", cfg.fixed_seconds);
    std::string floor = (cfg.bench_dir / "tpbench-floor").string();
    auto tool = [&](const char* name) { return (cfg.bin_dir / name).string(); };
    std::vector<FixedContender> out{
        {"floor-hist-tp", "floor: log2 hist, tracepoint", "floor", {floor, "hist-tp", "-d", d},
         cfg.fixed_seconds, {}},
        {"floor-hist-raw", "floor: log2 hist, raw_tp (CO-RE: loads kernel BTF)", "floor",
         {floor, "hist-raw", "-d", d}, cfg.fixed_seconds, {}},
        {"floor-ring", "floor: ring buffer streamer", "floor",
         {floor, "stream-read", "-p", "1", "-d", d}, cfg.fixed_seconds, {}},
        {"tphist", "tphist syscalls:sys_enter_read count", "tpkit",
         {tool("tphist"), "syscalls:sys_enter_read", "count", "-d", d}, cfg.fixed_seconds, {}},
        {"tpcount", "tpcount syscalls:sys_enter_read", "tpkit",
         {tool("tpcount"), "syscalls:sys_enter_read", "-d", d}, cfg.fixed_seconds, {}},
        {"tpcount-all", "tpcount 'syscalls:sys_enter_*'", "tpkit",
         {tool("tpcount"), "syscalls:sys_enter_*", "-d", d}, cfg.fixed_seconds, {}},
        {"tpcount-all-classic", "tpcount 'syscalls:sys_enter_*' --classic", "tpkit",
         {tool("tpcount"), "syscalls:sys_enter_*", "--classic", "-d", d}, cfg.fixed_seconds, {},
         static_cast<int>(syscall_enter_events().size())},
        {"tpsnoop", "tpsnoop sched:sched_process_fork", "tpkit",
         {tool("tpsnoop"), "sched:sched_process_fork", "-d", d}, cfg.fixed_seconds, {}},
        {"forksnoop", "forksnoop", "tpkit", {tool("forksnoop"), "-d", d}, cfg.fixed_seconds, {}},
        {"netrxlen", "netrxlen", "tpkit", {tool("netrxlen"), "-d", d}, cfg.fixed_seconds, {}},
        {"syscount", "syscount", "tpkit", {tool("syscount"), "-d", d}, cfg.fixed_seconds, {}},
        // As libbpf-tools take them: whole seconds.
        {"runqlat", "runqlat 1 1", "tpkit", {tool("runqlat"), "1", "1"}, 1, {}, 3},
        {"cpudist", "cpudist 1 1", "tpkit", {tool("cpudist"), "1", "1"}, 1, {}},
        {"offcputime", "offcputime -d 1", "tpkit", {tool("offcputime"), "-d", "1"}, 1, {}},
        {"wakeuptime", "wakeuptime -d 1", "tpkit", {tool("wakeuptime"), "-d", "1"}, 1, {}, 2},
        {"biolatency", "biolatency 1 1", "tpkit", {tool("biolatency"), "1", "1"}, 1, {}, 2},
        {"hardirqs", "hardirqs 1 1", "tpkit", {tool("hardirqs"), "1", "1"}, 1, {}, 2},
        {"softirqs", "softirqs 1 1", "tpkit", {tool("softirqs"), "1", "1"}, 1, {}, 2},
    };
    auto add = [&](std::string id, std::string label, std::string family,
                   const std::string& program, std::vector<std::string> args, double seconds) {
        out.push_back(fixed_external(std::move(id), std::move(label), std::move(family), program,
                                     args, seconds));
    };
    add("bpftrace-hist", "bpftrace hist(args->count), exit() on an interval", "bpftrace",
        p.bpftrace,
        {"-e", bpftrace_until_exit("tracepoint:syscalls:sys_enter_read { @ = hist(args->count); }",
                                   cfg.fixed_seconds)},
        cfg.fixed_seconds);
    // libbpf-tools take whole seconds.
    add("libbpf-runqlat", "libbpf-tools runqlat 1 1", "libbpf-tools", p.runqlat, {"1", "1"}, 1);
    out.back().programs = 3;
    add("libbpf-cpudist", "libbpf-tools cpudist 1 1", "libbpf-tools", p.cpudist, {"1", "1"}, 1);
    add("libbpf-offcputime", "libbpf-tools offcputime 1", "libbpf-tools", p.offcputime, {"1"}, 1);
    add("libbpf-wakeuptime", "libbpf-tools wakeuptime 1", "libbpf-tools", p.wakeuptime, {"1"}, 1);
    out.back().programs = 2;
    add("libbpf-syscount", "libbpf-tools syscount -d 1", "libbpf-tools", p.syscount, {"-d", "1"}, 1);
    for (const auto& [name, program] :
         {std::pair{"biolatency", p.biolatency}, {"hardirqs", p.hardirqs}, {"softirqs", p.softirqs}}) {
        add(fmt::format("libbpf-{}", name), fmt::format("libbpf-tools {} 1 1", name), "libbpf-tools",
            program, {"1", "1"}, 1);
        out.back().programs = 2;
    }
    // Every other tool for one second (--duration: some tools' -d is a disk), and libbpf-tools'
    // same tool where it runs here; the count is of distinct programs attached.
    struct Peer {
        std::vector<std::string> args; // empty: stopped by SIGINT
        int programs;
    };
    struct Tool {
        const char* name;
        std::vector<std::string> args;
        int programs;
        std::optional<Peer> peer;
    };
    const std::vector<std::string> one_interval{"1", "1"};
    const std::vector<Tool> tools{
        {"execsnoop", {}, 4, Peer{{}, 2}},
        // libbpf-tools' opensnoop and drsnoop -d exit 1 when the last poll before the end
        // returned events (the count is left as their status): stopped with SIGINT instead.
        {"opensnoop", {}, 6, Peer{{}, 2}},
        {"statsnoop", {}, 10, {}}, // libbpf-tools' attaches nothing on 6.18
        {"exitsnoop", {}, 1, Peer{{}, 1}},
        {"sigsnoop", {}, 1, Peer{{}, 1}},
        {"killsnoop", {}, 7, Peer{{}, 6}},
        {"mountsnoop", {}, 12, Peer{{}, 4}},
        {"syncsnoop", {}, 6, {}},
        {"capable", {}, 1, {}},
        {"drsnoop", {}, 4, Peer{{}, 2}},
        {"oomkill", {}, 2, {}},
        {"runqslower", {}, 3, Peer{{}, 3}},
        {"wqlat", {}, 2, {}},
        {"nettxlen", {}, 1, {}},
        {"tcpstates", {}, 1, Peer{{}, 1}},
        {"tcplife", {}, 1, Peer{{}, 1}},
        {"tcpconnect", {}, 1, {}},
        {"tcpaccept", {}, 2, {}},
        {"tcprtt", {}, 1, {}},
        {"tcpretrans", {}, 2, {}},
        {"tcpdrop", {}, 1, {}},
        {"solisten", {}, 3, {}},
        {"bindsnoop", {}, 2, {}},
        {"biosnoop", {}, 4, {}},
        {"biotop", {}, 4, {}},
        {"bitesize", {}, 2, Peer{one_interval, 1}},
        {"biopattern", {}, 1, Peer{one_interval, 1}},
        {"tplat", {"syscalls:sys_enter_getpid", "syscalls:sys_exit_getpid"}, 1, {}},
        {"threadsnoop", {}, 1, {}},
        {"pidpersec", {}, 1, {}},
        {"futexctn", {}, 2, {}},
        {"slabratetop", {}, 1, {}},
        {"tcptop", {}, 2, {}},
        {"compactsnoop", {}, 2, {}},
        {"numamove", {}, 2, {}},
        {"sofdsnoop", {}, 8, {}},
        {"readahead", {}, 4, {}},
        {"klockstat", {}, 2, {}},
    };
    for (const auto& t : tools) {
        FixedContender c{t.name, t.name, "tpkit", {tool(t.name)}, cfg.fixed_seconds, {}, t.programs};
        c.argv.insert(c.argv.end(), t.args.begin(), t.args.end());
        c.argv.insert(c.argv.end(), {"--duration", d});
        out.push_back(std::move(c));
        if (!t.peer)
            continue;
        const Peer& peer = *t.peer;
        add(fmt::format("libbpf-{}", t.name),
            fmt::format("libbpf-tools {} {}", t.name,
                        peer.args.empty() ? "(SIGINT)" : fmt::format("{}", fmt::join(peer.args, " "))),
            "libbpf-tools", tpbench::libbpf_tool(t.name), peer.args, 1);
        out.back().programs = peer.programs;
        out.back().interrupt = peer.args.empty();
    }
    add("perf-stat", "perf stat -e syscalls:sys_enter_read -a -- sleep", "perf", p.perf,
        {"stat", "-x,", "-e", "syscalls:sys_enter_read", "-a", "--", "sleep", d},
        cfg.fixed_seconds);
    out.back().programs = 0;
    return out;
}

struct FixedResult {
    // fixed_ms to the exit (the shell's prompt), eof_ms to the end of stdout (the output
    // complete), detached_ms to the exit of the last process the run left (everything detached)
    std::vector<double> fixed_ms, eof_ms, rss_mib, attach_ms, detached_ms;
    std::string error;
};

// glob-scale: start-up, exit and peak RSS of tpcount with 1, 10, 100 and every sys_enter_*
// event (the subsets syscall-scale counts), through raw_syscalls and through one classic
// tracepoint each.
std::vector<FixedContender> glob_scale_contenders(const Config& cfg)
{
    std::string d = fmt::format("{}", cfg.fixed_seconds);
    std::string tpcount = (cfg.bin_dir / "tpcount").string();
    auto enter_events = syscall_enter_events();
    std::vector<FixedContender> out;
    for (std::size_t n : {std::size_t(1), std::size_t(10), std::size_t(100), enter_events.size()}) {
        if (n > enter_events.size() || (cfg.smoke && n > 10))
            continue;
        const bool all = n == enter_events.size();
        std::string count = all ? "all" : std::to_string(n);
        for (bool classic : {false, true}) {
            std::vector<std::string> argv{tpcount};
            argv.insert(argv.end(), enter_events.begin(), enter_events.begin() + static_cast<std::ptrdiff_t>(n));
            if (classic)
                argv.push_back("--classic");
            argv.insert(argv.end(), {"-d", d});
            out.push_back({fmt::format("glob-{}{}", count, classic ? "-classic" : ""),
                           fmt::format("tpcount, {} sys_enter_* event{}{}", count, n == 1 ? "" : "s",
                                       classic ? ", --classic" : ""),
                           "tpkit", argv, cfg.fixed_seconds, {},
                           classic ? static_cast<int>(n) : 1,
                           classic && all ? cfg.glob_all_classic_rounds : 0});
        }
    }
    return out;
}

// glob-exit: the events of the largest subsystem but syscalls (xfs:* here, 631), by name; its
// first 1, 10, 100 and all of them counted by tpcount (a classic tracepoint each), bpftrace
// (@[probe] = count()) and perf stat, for the time to the prompt and to everything detached.
std::vector<FixedContender> glob_exit_contenders(const Config& cfg, const Programs& p)
{
    std::map<std::string, std::vector<std::string>> by_system;
    try {
        for (const auto& e : tpkit::list_events(tpkit::live_events_root(), ""))
            if (e.system != "syscalls" && tpkit::attaches_bpf(e))
                by_system[e.system].push_back(e.event);
    } catch (const std::exception&) {
        return {};
    }
    auto largest = std::max_element(by_system.begin(), by_system.end(), [](const auto& a, const auto& b) {
        return a.second.size() < b.second.size();
    });
    if (largest == by_system.end())
        return {};
    const auto& [system, events] = *largest;
    std::string d = fmt::format("{}", cfg.fixed_seconds);
    std::vector<FixedContender> out;
    std::set<std::size_t> counts{1, 10, 100, events.size()};
    for (std::size_t n : counts) {
        if (n > events.size() || (cfg.smoke && n > 10))
            continue;
        const bool all = n == events.size();
        const std::string what = all ? fmt::format("all {} {}:*", n, system)
                                     : fmt::format("{} {}:* event{}", n, system, n == 1 ? "" : "s");
        const int rounds = all ? cfg.glob_all_classic_rounds : 0;
        std::vector<std::string> tpcount{(cfg.bin_dir / "tpcount").string()}, probes, perf_events;
        for (std::size_t i = 0; i < n; i++) {
            tpcount.push_back(system + ":" + events[i]);
            probes.push_back(fmt::format("tracepoint:{}:{}", system, events[i]));
            perf_events.push_back(system + ":" + events[i]);
        }
        tpcount.insert(tpcount.end(), {"-d", d});
        out.push_back({fmt::format("exit-tpcount-{}", n), "tpcount, " + what, "tpkit", tpcount,
                       cfg.fixed_seconds, {}, static_cast<int>(n), rounds});
        auto add = [&](std::string id, std::string label, std::string family,
                       const std::string& program, std::vector<std::string> args, int programs) {
            FixedContender c = fixed_external(std::move(id), std::move(label), std::move(family),
                                              program, args, cfg.fixed_seconds);
            c.programs = programs;
            c.rounds = rounds;
            out.push_back(std::move(c));
        };
        add(fmt::format("exit-bpftrace-{}", n), "bpftrace @[probe] = count(), " + what, "bpftrace",
            p.bpftrace,
            {"-e", bpftrace_until_exit(fmt::format("{} {{ @[probe] = count(); }}", fmt::join(probes, ",")),
                                       cfg.fixed_seconds)},
            static_cast<int>(n));
        add(fmt::format("exit-perf-{}", n), "perf stat -a -- sleep, " + what, "perf", p.perf,
            {"stat", "-x,", "-e", fmt::format("{}", fmt::join(perf_events, ",")), "-a", "--", "sleep", d}, 0);
    }
    return out;
}

// Reaps the processes a run left behind and this process adopted (a subreaper): waits until
// none is left, at most `timeout`; the age of `proc` when the last one exited, in ms.
double reap_adopted(Process& proc, std::chrono::milliseconds timeout)
{
    double last = std::chrono::duration<double, std::milli>(proc.age()).count();
    const auto deadline = tpbench::Clock::now() + timeout;
    for (;;) {
        pid_t pid = waitpid(-1, nullptr, WNOHANG);
        if (pid > 0) {
            last = std::chrono::duration<double, std::milli>(proc.age()).count();
            continue;
        }
        if ((pid < 0 && errno == ECHILD) || tpbench::Clock::now() > deadline)
            return last;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// Each contender run `rounds` times (its own limit first), interleaved, the order rotating:
// wall time to EOF on stdout, to the exit and to the exit of what it left running (as the
// subreaper of its runs), start-up until attached, peak RSS.
std::vector<FixedResult> run_fixed(const std::vector<FixedContender>& fixed, int rounds,
                                   std::vector<std::string>& failures)
{
    std::vector<FixedResult> fixed_results(fixed.size());
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    for (int round = 0; round < rounds; round++)
        for (std::size_t k = 0; k < fixed.size(); k++) {
            std::size_t i = (k + static_cast<std::size_t>(round)) % fixed.size();
            const auto& c = fixed[i];
            if (!c.missing.empty() || (c.rounds && round >= c.rounds))
                continue;
            MemFile out, err;
            // stdout is a pipe read to its end: when a reader (`| jq`) has all of the output.
            int out_pipe[2];
            if (pipe2(out_pipe, O_CLOEXEC) != 0)
                throw std::runtime_error("pipe failed");
            Process proc(c.argv, out_pipe[1], err.fd());
            close(out_pipe[1]);
            // Start-up: until the programs are attached; the rest of the fixed cost is the
            // exit (detaching, which waits for the kernel) and the loop's last tick.
            tpbench::Attachments attached;
            double attach_ms = nan_value;
            if (tpbench::wait_attached(proc, c.programs, 60s, attached))
                attach_ms = std::chrono::duration<double, std::milli>(proc.age()).count();
            if (c.interrupt) {
                std::this_thread::sleep_for(std::chrono::duration<double>(c.seconds));
                proc.signal(SIGINT);
            }
            out.append_until_eof(out_pipe[0]);
            close(out_pipe[0]);
            double eof_ms = std::chrono::duration<double, std::milli>(proc.age()).count() -
                            c.seconds * 1000;
            auto f = proc.wait(std::chrono::milliseconds(static_cast<long>(c.seconds * 1000) + 60'000));
            const double detached_ms = reap_adopted(proc, 300s) - c.seconds * 1000;
            if (!f.ok()) {
                fixed_results[i].error = fmt::format("{}: {}", f.describe(), err.head(300));
                failures.push_back(fmt::format("{} (fixed cost): {}", c.label,
                                               fixed_results[i].error));
                continue;
            }
            fixed_results[i].fixed_ms.push_back((f.wall_seconds - c.seconds) * 1000);
            fixed_results[i].rss_mib.push_back(f.max_rss_mib);
            fixed_results[i].attach_ms.push_back(attach_ms);
            fixed_results[i].eof_ms.push_back(eof_ms);
            fixed_results[i].detached_ms.push_back(detached_ms);
        }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    return fixed_results;
}

// ---------------------------------------------------------------------------------------------
// Zero-loss rate sweep

struct RateStep {
    SweepStep step;
    Run run;
    double achieved = nan_value; // events per second the workload made
};

struct SweepResult {
    std::vector<RateStep> steps;
    std::string note;
};

// Steps up the rates until the first one with a loss. Where the workload cannot make the rate
// asked (achieved < 90%), the step is made again with one producer thread more, up to one on
// each CPU; where all of them cannot, the sweep ends there.
SweepResult sweep(const Config& cfg, const Contender& c, const std::string& workload,
                  const std::vector<std::uint64_t>& rates)
{
    SweepResult result;
    const int max_producers = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    int producers = std::min(cfg.first_producers, max_producers);
    for (std::size_t i = 0; i < rates.size();) {
        const SweepStep s{rates[i], producers};
        auto ops = static_cast<std::uint64_t>(std::llround(static_cast<double>(s.rate) * cfg.rate_seconds));
        std::vector<std::string> threads;
        if (s.threads > 1)
            threads = {"--threads", std::to_string(s.threads)};
        RateStep step{s, run_once(cfg, c, workload, ops, s.rate, false, false, threads), nan_value};
        if (step.run.ok && step.run.elapsed_s > 0)
            step.achieved = static_cast<double>(ops) / step.run.elapsed_s;
        result.steps.push_back(step);
        if (!step.run.ok || (step.run.lost && *step.run.lost > 0))
            return result;
        if (step.achieved >= 0.9 * static_cast<double>(s.rate))
            i++;
        else if (producers < max_producers)
            producers++;
        else {
            result.note = fmt::format("the traced workload could not go faster with {} producer{}",
                                      producers, producers > 1 ? "s" : "");
            break;
        }
    }
    return result;
}

// ---------------------------------------------------------------------------------------------
// Report

struct Target {
    std::string what;
    std::string measured;
    std::optional<bool> met; // nullopt: not measured here
};

std::string machine_description()
{
    std::string model;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.rfind("model name", 0) == 0) {
            model = line.substr(line.find(':') + 2);
            break;
        }
    utsname u{};
    uname(&u);
    return fmt::format("{}, {} CPUs online; kernel {} {}", model, sysconf(_SC_NPROCESSORS_ONLN),
                       u.release, u.machine);
}

std::string now_utc()
{
    std::time_t t = std::time(nullptr);
    char text[64];
    std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    return text;
}

class JsonArray {
public:
    void push(const std::string& json) { items_ += (items_.empty() ? "" : ",") + json; }
    std::string str() const { return "[" + items_ + "]"; }

private:
    std::string items_;
};

std::string run_json(const Run& run, double added)
{
    tpkit::JsonObject js;
    js.add("ok", run.ok).add("ops", run.ops).add_raw("ns_per_op", json_num(run.ns_per_op))
        .add_raw("added_ns", json_num(added));
    if (run.delivered)
        js.add("delivered", *run.delivered).add("lost", *run.lost).add("exact", run.exact());
    if (run.bpf)
        js.add("bpf_run_time_ns", run.bpf->run_time_ns).add("bpf_run_cnt", run.bpf->run_cnt);
    for (const auto& [key, usage] : {std::pair{"start", run.usage_start}, {"end", run.usage_end}})
        if (usage)
            js.add(fmt::format("rss_mib_{}", key), usage->rss_mib).add(fmt::format("fds_{}", key), usage->fds);
    if (!run.error.empty())
        js.add("error", run.error);
    return js.str();
}

class Report {
public:
    explicit Report(const Config& cfg) : cfg_(cfg) {}

    void scenario(const Scenario& s, const std::vector<ContenderResult>& results)
    {
        const ContenderResult& none = results.at(0);
        std::map<std::string, Summary> by_id;
        for (std::size_t i = 0; i < s.contenders.size(); i++)
            by_id[s.contenders[i].id] = summarize(results[i], none);
        summaries_[s.id] = by_id;

        bool streaming = std::any_of(s.contenders.begin(), s.contenders.end(),
                                     [](const Contender& c) { return c.counting != Counting::none; });
        const std::string& unit = s.workload;
        fmt::print("\n### {}\n\n", s.title);
        fmt::print("{} × {}() per run (perf buffers and bpftrace's printf in the read streams: "
                   "{}), {} rounds interleaved; "
                   "medians; added = traced − untraced in the same round; ratios are medians of "
                   "per-round ratios.\n\n",
                   s.ops, s.workload, cfg_.slow_stream_ops, s.rounds);
        std::string reference = !s.reference.empty()   ? s.reference
                                : s.id == "read-hist" ? "floor-hist-tp"
                                                      : "floor-ring";
        std::string head = fmt::format("| contender | attach | ns/{} | added ns/{} (min..max) | "
                                       "× {} | BPF ns/{} | runs/{} |",
                                       unit, unit, s.reference.empty() ? "floor" : reference,
                                       unit, unit);
        std::string rule = "|---|---|--:|--:|--:|--:|--:|";
        if (streaming) {
            head += " delivered (min) | lost (max) | exact |";
            rule += "--:|--:|:-:|";
        }
        fmt::print("{}\n{}\n", head, rule);
        JsonArray rows;
        for (std::size_t i = 0; i < s.contenders.size(); i++) {
            const Contender& c = s.contenders[i];
            const Summary& sum = by_id[c.id];
            tpkit::JsonObject row;
            row.add("id", c.id).add("label", c.label).add("family", c.family).add("attach", c.attach);
            if (!c.missing.empty()) {
                fmt::print("| {} | {} | skipped: {} |\n", c.label, c.attach, c.missing);
                rows.push(row.add("skipped", c.missing).str());
                continue;
            }
            std::string ratio_text =
                c.id == "none" || c.id == reference ? "–" : num(ratio(sum, by_id[reference]), 2);
            std::string line = fmt::format(
                "| {} | {} | {} | {} ({}..{}) | {} | {} | {} |", c.label, c.attach,
                num(sum.ns_per_op), c.id == "none" ? "–" : num(sum.added),
                num(sum.added_min), num(sum.added_max), ratio_text, num(sum.bpf_ns_per_op),
                num(sum.bpf_runs_per_op, 2));
            if (streaming) {
                if (sum.counted)
                    line += fmt::format(" {} | {} | {} |", sum.delivered_min, sum.lost_max,
                                        sum.all_exact ? "yes" : "NO");
                else
                    line += " – | – | – |";
            }
            if (!sum.all_ok)
                line += " failed: " + sum.error;
            fmt::print("{}\n", line);
            JsonArray runs;
            for (std::size_t r = 0; r < results[i].rounds.size(); r++)
                runs.push(run_json(results[i].rounds[r], sum.added_by_round[r]));
            row.add_raw("median_ns_per_op", json_num(sum.ns_per_op))
                .add_raw("median_added_ns", json_num(sum.added))
                .add_raw("bpf_ns_per_op", json_num(sum.bpf_ns_per_op))
                .add_raw("bpf_runs_per_op", json_num(sum.bpf_runs_per_op))
                .add("ok", sum.all_ok)
                .add_raw("runs", runs.str());
            if (results[i].stats)
                row.add_raw("stats_run", run_json(*results[i].stats, nan_value));
            rows.push(row.str());
        }
        tpkit::JsonObject js;
        js.add("id", s.id).add("title", s.title).add("workload", s.workload).add("ops", s.ops)
            .add("rounds", s.rounds).add_raw("contenders", rows.str());
        scenarios_json_.push(js.str());
    }

    void sweeps(const std::string& workload, const std::vector<std::pair<Contender, SweepResult>>& all)
    {
        fmt::print("\n### Highest zero-loss event rate ({}(), -p, {} s per step; steps past one "
                   "producer's CPU made by a producer thread on each CPU)\n\n",
                   workload, cfg_.rate_seconds);
        fmt::print("| contender | highest zero-loss rate (achieved /s, producers) | first lossy step: "
                   "target /s (producers) → achieved /s | made | delivered | lost | exact |\n"
                   "|---|--:|--:|--:|--:|--:|:-:|\n");
        for (const auto& [c, result] : all) {
            tpkit::JsonObject js;
            js.add("id", c.id).add("label", c.label);
            if (!c.missing.empty()) {
                fmt::print("| {} | skipped: {} |\n", c.label, c.missing);
                sweeps_json_.push(js.add("skipped", c.missing).str());
                continue;
            }
            double best = nan_value;
            int best_producers = 0;
            const RateStep* lossy = nullptr;
            std::string failure;
            JsonArray steps;
            for (const auto& step : result.steps) {
                tpkit::JsonObject sj;
                sj.add("target_rate", step.step.rate).add("producers", step.step.threads).add_raw("achieved_rate", json_num(step.achieved))
                    .add_raw("run", run_json(step.run, nan_value));
                steps.push(sj.str());
                if (!step.run.ok) {
                    failure = step.run.error;
                    continue;
                }
                if (step.run.lost && *step.run.lost > 0)
                    lossy = &step;
                else if (!(step.achieved <= best)) {
                    best = step.achieved;
                    best_producers = step.step.threads;
                }
            }
            sweep_best_[workload + ":" + c.id] = best;
            if (lossy)
                sweep_lossy_exact_[workload + ":" + c.id] = lossy->run.exact();
            std::string line = fmt::format("| {} | {} ({}){} |", c.label, num(best), best_producers,
                                           result.note.empty() ? "" : "; " + result.note);
            if (lossy)
                line += fmt::format(" {} ({}) → {} | {} | {} | {} | {} |", lossy->step.rate,
                                    lossy->step.threads, num(lossy->achieved), lossy->run.ops,
                                    *lossy->run.delivered, *lossy->run.lost,
                                    lossy->run.exact() ? "yes" : "NO");
            else
                line += " none up to the last step | – | – | – | – |";
            if (!failure.empty())
                line += " failed: " + failure;
            fmt::print("{}\n", line);
            js.add("workload", workload).add_raw("highest_zero_loss_rate", json_num(best)).add_raw("steps", steps.str());
            if (!result.note.empty())
                js.add("note", result.note);
            sweeps_json_.push(js.str());
        }
    }

    void keys(const std::vector<KeyCase>& cases, const std::vector<std::vector<Run>>& runs)
    {
        fmt::print("\n### Keyed maps: tpcount and tphist --by with 10, 1k, 100k keys, drained every "
                   "{} s\n\n", cfg_.key_interval);
        fmt::print("{} × read() per run, {} rounds; medians (min..max). Drain = the tool's CPU "
                   "time (schedstat) from attached to the workload's end / the intervals it printed "
                   "then. BPF ns per event from bpf_stats in every run. Map MiB: the memlock of the "
                   "tool's maps once the workload is done.\n\n",
                   cfg_.key_ops, cfg_.rounds);
        fmt::print("| tool | key | keys | --max-keys | BPF ns/event | runs/event | drain ms per "
                   "interval (min..max) | intervals | peak RSS MiB | map MiB | counted | not counted "
                   "(JSON lost; stderr) | exact |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|\n");
        for (std::size_t i = 0; i < cases.size(); i++) {
            const KeyCase& k = cases[i];
            std::vector<double> bpf, bpf_runs, drain, intervals, rss, maps;
            std::uint64_t counted_min = std::numeric_limits<std::uint64_t>::max(), counted_max = 0;
            std::uint64_t lost_min = std::numeric_limits<std::uint64_t>::max(), lost_max = 0;
            std::uint64_t said_min = std::numeric_limits<std::uint64_t>::max(), said_max = 0;
            bool exact = true, any = false;
            std::string error;
            JsonArray runs_json;
            for (const Run& run : runs[i]) {
                tpkit::JsonObject rj;
                rj.add_raw("run", run_json(run, nan_value));
                if (!run.ok) {
                    error = run.error;
                    runs_json.push(rj.str());
                    continue;
                }
                any = true;
                if (run.bpf && run.ops) {
                    bpf.push_back(static_cast<double>(run.bpf->run_time_ns) / run.ops);
                    bpf_runs.push_back(static_cast<double>(run.bpf->run_cnt) / run.ops);
                }
                const std::size_t printed = run.intervals_end - run.intervals_start;
                double drain_ms = nan_value;
                if (run.usage_start && run.usage_end && printed > 0)
                    drain_ms = static_cast<double>(run.usage_end->cpu_ns - run.usage_start->cpu_ns) /
                               1e6 / static_cast<double>(printed);
                drain.push_back(drain_ms);
                intervals.push_back(static_cast<double>(printed));
                rss.push_back(run.peak_rss_mib);
                if (run.usage_end)
                    maps.push_back(run.usage_end->map_mib);
                counted_min = std::min(counted_min, run.delivered.value_or(0));
                counted_max = std::max(counted_max, run.delivered.value_or(0));
                lost_min = std::min(lost_min, run.lost.value_or(0));
                lost_max = std::max(lost_max, run.lost.value_or(0));
                said_min = std::min(said_min, run.said_not_counted);
                said_max = std::max(said_max, run.said_not_counted);
                exact = exact && run.exact() && run.said_not_counted == run.lost.value_or(0);
                rj.add_raw("drain_ms_per_interval", json_num(drain_ms)).add("intervals", printed)
                    .add("said_not_counted", run.said_not_counted)
                    .add_raw("peak_rss_mib", json_num(run.peak_rss_mib));
                runs_json.push(rj.str());
            }
            auto range = [](std::uint64_t lo, std::uint64_t hi) {
                return lo == hi ? fmt::format("{}", lo) : fmt::format("{}..{}", lo, hi);
            };
            auto spread = [](const std::vector<double>& v, int decimals) {
                std::vector<double> f;
                for (double x : v)
                    if (std::isfinite(x))
                        f.push_back(x);
                if (f.empty())
                    return std::string("–");
                auto [lo, hi] = std::minmax_element(f.begin(), f.end());
                return fmt::format("{} ({}..{})", num(median(f), decimals), num(*lo, decimals),
                                   num(*hi, decimals));
            };
            std::string line = fmt::format("| {} | {} | {} | {}{} |", k.tool, k.by,
                                           k.by == "pid" ? fmt::format("{} processes", k.keys)
                                                         : std::to_string(k.keys),
                                           k.max_keys, k.max_keys < k.keys ? " (full)" : "");
            if (any)
                line += fmt::format(" {} | {} | {} | {} | {} | {} | {} | {}; {} | {} |",
                                    num(median(bpf)), num(median(bpf_runs), 2), spread(drain, 2),
                                    num(median(intervals)), num(median(rss), 1), num(median(maps), 1),
                                    range(counted_min, counted_max), range(lost_min, lost_max),
                                    range(said_min, said_max), exact ? "yes" : "NO");
            if (!error.empty())
                line += " failed: " + error;
            fmt::print("{}\n", line);
            tpkit::JsonObject js;
            js.add("id", k.contender.id).add("tool", k.tool).add("by", k.by).add("keys", k.keys)
                .add("max_keys", k.max_keys).add_raw("median_bpf_ns_per_event", json_num(median(bpf)))
                .add_raw("median_drain_ms_per_interval", json_num(median(drain)))
                .add("exact", exact).add_raw("runs", runs_json.str());
            keys_json_.push(js.str());
        }
    }

    // PART names the results in the JSON; those of "fixed" are the ones held to the targets.
    void fixed(const std::vector<FixedContender>& contenders, const std::vector<FixedResult>& results,
               const std::string& title = "", const std::string& part = "fixed")
    {
        const bool for_targets = part == "fixed";
        fmt::print("\n### {}{} of a {} s run (wall − duration) and peak RSS\n\n",
                   title.empty() ? "Fixed cost" : title, title.empty() ? "" : ": fixed cost",
                   cfg_.fixed_seconds);
        fmt::print("| contender | fixed ms to EOF on stdout (median) | fixed ms to exit | min..max "
                   "| fixed ms to all detached | of which start-up to attached, ms | peak RSS MiB "
                   "|\n|---|--:|--:|--:|--:|--:|--:|\n");
        for (std::size_t i = 0; i < contenders.size(); i++) {
            const auto& c = contenders[i];
            const auto& r = results[i];
            tpkit::JsonObject js;
            js.add("id", c.id).add("label", c.label).add("family", c.family).add("seconds", c.seconds);
            if (!c.missing.empty()) {
                fmt::print("| {} | skipped: {} |\n", c.label, c.missing);
                fixed_json_.push(js.add("skipped", c.missing).str());
                continue;
            }
            double ms = median(r.fixed_ms), rss = median(r.rss_mib);
            if (for_targets) {
                fixed_ms_[c.id] = ms;
                rss_mib_[c.id] = rss;
            }
            auto [lo, hi] = r.fixed_ms.empty() ? std::pair(nan_value, nan_value)
                                               : std::pair(*std::min_element(r.fixed_ms.begin(), r.fixed_ms.end()),
                                                           *std::max_element(r.fixed_ms.begin(), r.fixed_ms.end()));
            double attach = median(r.attach_ms), eof = median(r.eof_ms), detached = median(r.detached_ms);
            if (for_targets)
                eof_ms_[c.id] = eof;
            fmt::print("| {} | {} | {} | {}..{} | {} | {} | {} |{}\n", c.label, num(eof, 1), num(ms, 1),
                       num(lo, 1), num(hi, 1), num(detached, 1), num(attach, 1), num(rss, 1),
                       r.error.empty() ? "" : " failed: " + r.error);
            JsonArray ms_json, rss_json;
            for (double v : r.fixed_ms)
                ms_json.push(json_num(v));
            for (double v : r.rss_mib)
                rss_json.push(json_num(v));
            JsonArray attach_json;
            for (double v : r.attach_ms)
                attach_json.push(json_num(v));
            JsonArray eof_json, detached_json;
            for (double v : r.eof_ms)
                eof_json.push(json_num(v));
            for (double v : r.detached_ms)
                detached_json.push(json_num(v));
            js.add_raw("median_eof_ms", json_num(eof)).add_raw("eof_ms", eof_json.str());
            js.add_raw("median_detached_ms", json_num(detached)).add_raw("detached_ms", detached_json.str());
            js.add_raw("median_fixed_ms", json_num(ms)).add_raw("median_rss_mib", json_num(rss))
                .add_raw("median_attach_ms", json_num(attach)).add_raw("attach_ms", attach_json.str())
                .add_raw("fixed_ms", ms_json.str()).add_raw("rss_mib", rss_json.str());
            if (!r.error.empty())
                js.add("error", r.error);
            js.add("part", part);
            fixed_json_.push(js.str());
        }
    }

    void targets()
    {
        std::vector<Target> t;
        auto summary = [&](const std::string& scenario, const std::string& id) -> const Summary* {
            auto s = summaries_.find(scenario);
            if (s == summaries_.end())
                return nullptr;
            auto c = s->second.find(id);
            return c == s->second.end() || !c->second.all_ok ? nullptr : &c->second;
        };
        auto ratio_target = [&](const std::string& scenario, const std::string& id,
                                const std::string& ref, double limit) {
            const Summary* a = summary(scenario, id);
            const Summary* b = summary(scenario, ref);
            Target x{fmt::format("{}: added ns ≤ {}× {} ({})", id, limit, ref, scenario), "not measured",
                     std::nullopt};
            if (a && b) {
                double r = ratio(*a, *b);
                x.measured = fmt::format("{:.2f}× ({} vs {} ns)", r, num(a->added), num(b->added));
                if (std::isfinite(r))
                    x.met = r <= limit;
            }
            t.push_back(x);
        };
        ratio_target("read-hist", "tphist", "floor-hist-tp", 0.7);
        ratio_target("read-hist", "tpcount", "floor-hist-tp", 0.7);
        ratio_target("read-hist", "tphist", "floor-hist-raw", 1.05);
        ratio_target("read-hist", "tpcount", "floor-hist-raw", 1.05);
        ratio_target("read-hist", "tphist-classic", "floor-hist-tp", 1.05);
        ratio_target("read-hist", "tpcount-classic", "floor-hist-tp", 1.05);
        ratio_target("syscall-scale", "tpcount-all", "tpcount-1", 1.05);
        ratio_target("read-hist", "tphist", "bpftrace-hist", 0.5);
        ratio_target("read-hist", "tpcount", "bpftrace-count", 0.5);
        for (const char* id : {"tphist", "forksnoop"}) {
            Target f{fmt::format("{}: fixed cost ≤ 20 ms", id), "not measured", std::nullopt};
            if (auto it = fixed_ms_.find(id); it != fixed_ms_.end() && std::isfinite(it->second)) {
                f.measured = fmt::format("{:.1f} ms", it->second);
                f.met = it->second <= 20;
            }
            t.push_back(f);
            Target m{fmt::format("{}: peak RSS ≤ 8 MiB", id), "not measured", std::nullopt};
            if (auto it = rss_mib_.find(id); it != rss_mib_.end() && std::isfinite(it->second)) {
                m.measured = fmt::format("{:.1f} MiB", it->second);
                m.met = it->second <= 8;
            }
            t.push_back(m);
        }
        {
            Target a{"tpcount 'syscalls:sys_enter_*': start + exit ≤ 500 ms (a 0.5 s run in 1 s)",
                     "not measured", std::nullopt};
            if (auto it = fixed_ms_.find("tpcount-all"); it != fixed_ms_.end() && std::isfinite(it->second)) {
                a.measured = fmt::format("{:.1f} ms", it->second);
                a.met = it->second <= 500;
            }
            t.push_back(a);
        }
        // Every tool's output is complete and stdout closed no later than libbpf-tools' runqlat
        // exits.
        if (auto ref = fixed_ms_.find("libbpf-runqlat"); ref != fixed_ms_.end() && std::isfinite(ref->second))
            for (const auto& [id, eof] : eof_ms_) {
                if (id.starts_with("libbpf-") || id.starts_with("floor-") || id.starts_with("bpftrace") ||
                    id.starts_with("perf") || !std::isfinite(eof))
                    continue;
                t.push_back({fmt::format("{}: fixed cost to EOF ≤ libbpf-tools runqlat's to exit", id),
                             fmt::format("{:.1f} vs {:.1f} ms", eof, ref->second), eof <= ref->second});
            }
        ratio_target("read-stream", "tpsnoop", "floor-ring", 1.2);
        ratio_target("read-stream", "tpsnoop-classic", "floor-ring", 1.2);
        ratio_target("read-stream", "tpsnoop-perf", "floor-perf", 1.2);
        ratio_target("read-stream", "tpsnoop", "bpftrace-printf", 0.1);
        // Forks: the wall-clock difference per fork is below a fork's own noise here (tens of
        // µs), so the streaming targets are checked on the in-kernel cost (BPF run-time stats).
        auto bpf_target = [&](const std::string& scenario, const std::string& unit,
                              const std::string& id, const std::string& ref, double limit) {
            const Summary* a = summary(scenario, id);
            const Summary* b = summary(scenario, ref);
            Target x{fmt::format("{}: BPF ns/{} ≤ {}× {} ({}, bpf_stats)", id, unit, limit, ref,
                                 scenario),
                     "not measured", std::nullopt};
            if (a && b && std::isfinite(a->bpf_ns_per_op) && std::isfinite(b->bpf_ns_per_op)) {
                double r = a->bpf_ns_per_op / b->bpf_ns_per_op;
                x.measured = fmt::format("{:.2f}× ({} vs {} ns)", r, num(a->bpf_ns_per_op),
                                         num(b->bpf_ns_per_op));
                x.met = r <= limit;
            }
            t.push_back(x);
        };
        bpf_target("fork-stream", "fork", "forksnoop", "floor-ring", 1.5);
        bpf_target("fork-stream", "fork", "forksnoop-raw", "floor-ring", 1.5);
        bpf_target("fork-stream", "fork", "forksnoop-perf", "floor-perf", 1.5);
        bpf_target("fork-stream", "fork", "forksnoop-raw-perf", "floor-perf", 1.5);
        bpf_target("fork-stream", "fork", "forksnoop", "bpftrace-printf", 0.1);
        for (const auto& [scenario, id] : std::vector<std::pair<std::string, std::string>>{
                 {"read-stream", "tpsnoop"}, {"read-stream", "tpsnoop-perf"},
                 {"fork-stream", "forksnoop"}}) {
            const Summary* a = summary(scenario, id);
            Target x{fmt::format("{}: no loss over the burst ({})", id, scenario), "not measured",
                     std::nullopt};
            if (a && a->counted) {
                x.measured = fmt::format("{} lost at most", a->lost_max);
                x.met = a->lost_max == 0;
            }
            t.push_back(x);
            Target e{fmt::format("{}: delivered + lost == made ({})", id, scenario), "not measured",
                     std::nullopt};
            if (a && a->counted) {
                e.measured = a->all_exact ? "exact in every round" : "counts do not add up";
                e.met = a->all_exact;
            }
            t.push_back(e);
        }
        for (const char* id : {"tpsnoop", "tpsnoop-perf"}) {
            const Summary* d = summary("drops", id);
            Target e{fmt::format("{}: drops counted exactly past capacity (stalled reader)", id),
                     "not measured", std::nullopt};
            if (d && d->counted) {
                e.measured = fmt::format("{} lost; {}", d->lost_max,
                                         d->all_exact ? "delivered + lost == made"
                                                      : "counts do not add up");
                e.met = d->all_exact && d->lost_max > 0;
            }
            t.push_back(e);
        }
        // syscount and the scheduler tools: at or below libbpf-tools' same tools per event (each
        // of syscount's modes), at start and stop, and in memory.
        for (std::string mode : {"", "-L", "-P", "-x"})
            ratio_target("syscall-count", "syscount" + mode, "libbpf-syscount" + mode, 1.0);
        // A pipe round trip's wall time varies here by more than the tracers add to it: the
        // scheduler tools are held to their in-kernel cost.
        for (std::string name : {"runqlat", "cpudist", "offcputime"})
            bpf_target("sched-" + name, "switch", name, "libbpf-" + name, 1.0);
        for (std::string name : {"biolatency", "bitesize", "biopattern", "hardirqs"})
            bpf_target("block-" + name, "blockio", name, "libbpf-" + name, 1.0);
        for (std::string name : {"softirqs", "tcpstates", "tcplife"})
            bpf_target("tcp-" + name, "connect", name, "libbpf-" + name, 1.0);
        // Every tool that libbpf-tools also has, where theirs runs here.
        std::vector<std::string> with_peers;
        for (const auto& [id, ms] : fixed_ms_)
            if (fixed_ms_.contains("libbpf-" + id))
                with_peers.push_back(id);
        for (const std::string& name : with_peers)
            for (const auto& [what, figures, unit] : {std::tuple{"fixed cost", &fixed_ms_, "ms"},
                                                      std::tuple{"peak RSS", &rss_mib_, "MiB"}}) {
                Target x{fmt::format("{}: {} ≤ libbpf-tools {}'s", name, what, name),
                         "not measured", std::nullopt};
                auto a = figures->find(name), b = figures->find("libbpf-" + name);
                if (a != figures->end() && b != figures->end() && std::isfinite(a->second) &&
                    std::isfinite(b->second)) {
                    x.measured = fmt::format("{:.2f}× ({:.1f} vs {:.1f} {})", a->second / b->second,
                                             a->second, b->second, unit);
                    x.met = a->second <= b->second;
                }
                t.push_back(x);
            }

        fmt::print("\n### Targets\n\n| target | measured | met |\n|---|---|:-:|\n");
        for (const auto& x : t) {
            fmt::print("| {} | {} | {} |\n", x.what, x.measured,
                       !x.met ? "–" : *x.met ? "yes" : "**no**");
            tpkit::JsonObject js;
            js.add("target", x.what).add("measured", x.measured);
            if (x.met)
                js.add("met", *x.met);
            targets_json_.push(js.str());
        }
    }

    void write_json(const std::string& machine, const std::string& date) const
    {
        tpkit::JsonObject root;
        root.add("mode", cfg_.smoke ? "smoke" : "full").add("machine", machine).add("date", date)
            .add_raw("scenarios", scenarios_json_.str()).add_raw("rate_sweeps", sweeps_json_.str())
            .add_raw("fixed_cost", fixed_json_.str()).add_raw("keys", keys_json_.str()).add_raw("targets", targets_json_.str());
        fs::create_directories(cfg_.out.parent_path());
        std::ofstream(cfg_.out) << root.str() << "\n";
        fmt::print("\nJSON: {}\n", cfg_.out.string());
    }

private:
    const Config& cfg_;
    std::map<std::string, std::map<std::string, Summary>> summaries_;
    std::map<std::string, double> fixed_ms_, eof_ms_, rss_mib_, sweep_best_;
    std::map<std::string, bool> sweep_lossy_exact_;
    JsonArray scenarios_json_, sweeps_json_, fixed_json_, keys_json_, targets_json_;
};

// ---------------------------------------------------------------------------------------------

// Pass criterion (smoke and full): every installed contender ran and gave numbers. Counts that
// do not add up are findings about a tool, reported as warnings and in the targets table.
void check_run(const Contender& c, const Run& run, std::vector<std::string>& failures,
               std::vector<std::string>& warnings)
{
    if (!run.ok)
        failures.push_back(fmt::format("{}: {}", c.label, run.error));
    else if (run.delivered && !run.exact())
        warnings.push_back(fmt::format("{}: made {} events, delivered {} + lost {}", c.label,
                                       run.ops, *run.delivered, *run.lost));
}

// Progress on stderr, after flushing the tables printed so far.
class Progress {
public:
    void operator()(std::string_view what)
    {
        std::fflush(stdout);
        fmt::print(stderr, "tpbench: {} ({:.1f} s)\n", what,
                   std::chrono::duration<double>(tpbench::Clock::now() - start_).count());
    }

private:
    tpbench::Clock::time_point start_ = tpbench::Clock::now();
};

// Soak: tpsnoop, tphist and forksnoop each under a steady storm of their workload's events for
// --soak-seconds: memory (within 2 MiB) and descriptors must stay flat, and every event made be
// delivered or counted as lost; exit 1 otherwise.
int run_soak(const Config& cfg)
{
    tpkit::tracefs_root();
    auto tool = [&](const char* name) { return (cfg.bin_dir / name).string(); };
    struct Soak {
        Contender contender;
        std::string workload;
        std::uint64_t rate;
    };
    const std::vector<Soak> soaks{
        {external("tpsnoop", "tpsnoop syscalls:sys_enter_read -p PID --json", "tpkit", "tracepoint",
                  tool("tpsnoop"), {"syscalls:sys_enter_read", "-p", "{pid}", "--json"}, 1,
                  Counting::tpkit_json),
         "read", cfg.soak_read_rate},
        {external("tphist", "tphist syscalls:sys_enter_read count -p PID --json", "tpkit",
                  "tracepoint", tool("tphist"),
                  {"syscalls:sys_enter_read", "count", "-p", "{pid}", "--json"}, 1,
                  Counting::hist_json),
         "read", cfg.soak_read_rate},
        {external("forksnoop", "forksnoop -p PID --json", "tpkit", "tracepoint",
                  tool("forksnoop"), {"-p", "{pid}", "--json"}, 1, Counting::tpkit_json),
         "fork", cfg.soak_fork_rate},
    };
    fmt::print("## tpbench soak — {}\n\n{}\n\n", now_utc(), machine_description());
    fmt::print("Each tool {} s under a steady storm (read() or fork() of one process at the rate "
               "shown); RSS and open descriptors once attached and at the end.\n\n",
               cfg.soak_seconds);
    fmt::print("| tool | events/s | made | delivered | lost | exact | RSS MiB start → end | "
               "fds start → end |\n|---|--:|--:|--:|--:|:-:|--:|--:|\n");
    int failed = 0;
    JsonArray rows;
    for (const Soak& soak : soaks) {
        auto ops = static_cast<std::uint64_t>(std::llround(static_cast<double>(soak.rate) * cfg.soak_seconds));
        Run run = run_once(cfg, soak.contender, soak.workload, ops, soak.rate, false);
        tpkit::JsonObject row;
        row.add("id", soak.contender.id).add("rate", soak.rate).add_raw("run", run_json(run, nan_value));
        rows.push(row.str());
        if (!run.ok || !run.usage_start || !run.usage_end) {
            fmt::print("| {} | {} | failed: {} |\n", soak.contender.label, soak.rate, run.error);
            failed++;
            continue;
        }
        const auto &a = *run.usage_start, &b = *run.usage_end;
        fmt::print("| {} | {} | {} | {} | {} | {} | {:.1f} → {:.1f} | {} → {} |\n",
                   soak.contender.label, soak.rate, run.ops, *run.delivered, *run.lost,
                   run.exact() ? "yes" : "NO", a.rss_mib, b.rss_mib, a.fds, b.fds);
        // RSS may grow by an allocator's page or a buffer grown once (13.1 → 13.2 MiB over ten
        // minutes): 2 MiB more fails, a leak of 3 bytes per event over 40 s of reads at 20k/s.
        const bool rss_stable = b.rss_mib <= a.rss_mib + 2.0;
        if (!rss_stable)
            fmt::print(stderr, "tpbench: {}: RSS grew from {:.1f} to {:.1f} MiB\n",
                       soak.contender.label, a.rss_mib, b.rss_mib);
        failed += !run.exact() || b.fds != a.fds || !rss_stable;
    }
    std::ofstream(cfg.bench_dir / "soak.json") << rows.str() << "\n";
    return failed ? 1 : 0;
}

int run_all(const Config& cfg)
{
    tpkit::tracefs_root(); // the floors' libbpf looks tracepoints up there
    Programs p{tpbench::find_program("bpftrace"),   tpbench::find_program("perf"),
               tpbench::libbpf_tool("syscount"),   tpbench::libbpf_tool("runqlat"),
               tpbench::libbpf_tool("cpudist"),    tpbench::libbpf_tool("offcputime"),
               tpbench::libbpf_tool("wakeuptime"),
               tpbench::libbpf_tool("biolatency"), tpbench::libbpf_tool("bitesize"),
               tpbench::libbpf_tool("biopattern"), tpbench::libbpf_tool("hardirqs"),
               tpbench::libbpf_tool("softirqs"),   tpbench::libbpf_tool("tcpstates"),
               tpbench::libbpf_tool("tcplife")};
    std::string machine = machine_description(), date = now_utc();
    fmt::print("## tpbench {} — {}\n\n{}\n", cfg.smoke ? "smoke" : "full", date, machine);
    Report report(cfg);
    std::vector<std::string> failures, warnings;
    Progress progress;

    for (const Scenario& s : scenarios(cfg, p)) {
        if (!cfg.runs(s.id))
            continue;
        progress(s.id);
        std::vector<ContenderResult> results(s.contenders.size());
        const std::size_t n = s.contenders.size();
        for (int round = 0; round < s.rounds; round++)
            for (std::size_t k = 0; k < n; k++) {
                std::size_t i = (k + static_cast<std::size_t>(round)) % n; // rotate the order
                const Contender& c = s.contenders[i];
                if (!c.missing.empty())
                    continue;
                Run run = run_once(cfg, c, s.workload, c.ops ? c.ops : s.ops, 0, false,
                                   s.stalled_reader);
                check_run(c, run, failures, warnings);
                results[i].rounds.push_back(run);
            }
        // One more pass with BPF run-time statistics on (they cost a little themselves, so the
        // timed rounds run without them).
        for (std::size_t i = 0; i < n; i++) {
            const Contender& c = s.contenders[i];
            if (c.missing.empty() && c.programs > 0 && !c.argv.empty() && !s.stalled_reader)
                results[i].stats = run_once(cfg, c, s.workload, c.ops ? c.ops : s.ops, 0, true);
        }
        report.scenario(s, results);
    }

    if (cfg.runs("keys")) {
        progress("keys");
        auto cases = key_cases(cfg);
        std::vector<std::vector<Run>> key_runs(cases.size());
        for (int round = 0; round < cfg.rounds; round++)
            for (std::size_t k = 0; k < cases.size(); k++) {
                std::size_t i = (k + static_cast<std::size_t>(round)) % cases.size();
                const KeyCase& c = cases[i];
                Run run = run_once(cfg, c.contender, "read", cfg.key_ops, c.rate, true, false,
                                   c.work_args);
                check_run(c.contender, run, failures, warnings);
                if (run.ok && run.said_not_counted != run.lost.value_or(0))
                    warnings.push_back(fmt::format("{} ({} keys): {} not counted on stderr, {} in JSON",
                                                   c.contender.label, c.keys, run.said_not_counted,
                                                   run.lost.value_or(0)));
                key_runs[i].push_back(std::move(run));
            }
        report.keys(cases, key_runs);
    }

    if (cfg.runs("rate"))
        for (const auto& [workload, contenders] : sweep_contenders(cfg, p)) {
            progress("rate sweep: " + workload);
            const auto& steps = workload == "fork" ? cfg.fork_rates : cfg.rates;
            std::vector<std::pair<Contender, SweepResult>> sweeps;
            for (const Contender& c : contenders) {
                SweepResult r = c.missing.empty() ? sweep(cfg, c, workload, steps) : SweepResult{};
                for (const auto& step : r.steps)
                    check_run(c, step.run, failures, warnings);
                sweeps.emplace_back(c, r);
            }
            report.sweeps(workload, sweeps);
        }

    if (cfg.runs("glob-scale")) {
        progress("glob-scale");
        auto glob = glob_scale_contenders(cfg);
        report.fixed(glob, run_fixed(glob, cfg.rounds, failures),
                     "Start-up and exit by number of syscall events: tpcount with 1, 10, 100 and "
                     "all sys_enter_* events, raw_syscalls vs classic tracepoints",
                     "glob-scale");
    }

    if (cfg.runs("glob-exit")) {
        progress("glob-exit");
        // bpftrace's limits for hundreds of probes, and open files for them (bpftrace and perf
        // keep a few per event)
        setenv("BPFTRACE_MAX_PROBES", "4096", 0);
        setenv("BPFTRACE_MAX_BPF_PROGS", "4096", 0);
        rlimit files{};
        if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
            files.rlim_cur = files.rlim_max;
            setrlimit(RLIMIT_NOFILE, &files);
        }
        auto exits = glob_exit_contenders(cfg, p);
        report.fixed(exits, run_fixed(exits, cfg.rounds, failures),
                     "Big globs: time to the prompt and to everything detached, tpcount beside "
                     "bpftrace and perf stat on 1, 10, 100 and all events of the largest subsystem",
                     "glob-exit");
    }

    progress("fixed cost");
    auto fixed = fixed_contenders(cfg, p);
    if (cfg.smoke) // as in glob-scale: no ~14 s detach of hundreds of classic tracepoints
        std::erase_if(fixed, [](const FixedContender& c) { return c.programs > 10; });
    report.fixed(fixed, run_fixed(fixed, cfg.runs("fixed") ? cfg.rounds : 0, failures));
    report.targets();
    report.write_json(machine, date);
    progress("done");

    for (const Scenario& s : scenarios(cfg, p))
        for (const Contender& c : s.contenders)
            if (!c.missing.empty())
                fmt::print("tpbench: {} skipped: {}\n", c.label, c.missing);
    for (const auto& w : warnings)
        fmt::print("tpbench: warning: {}\n", w);
    if (!failures.empty()) {
        for (const auto& f : failures)
            fmt::print(stderr, "tpbench: FAILED {}\n", f);
        return 1;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    tpbench::block_ready_signal();
    Config cfg;
    cfg.bin_dir = TPKIT_BIN_DIR;
    cfg.bench_dir = fs::canonical("/proc/self/exe").parent_path();
    cfg.out = cfg.bench_dir / "results.json";

    CLI::App app("tpkit side by side with hand-written floors, bpftrace, libbpf-tools and perf.",
                 "tpbench");
    app.add_flag("--smoke", cfg.smoke, "tiny sizes, one round: checks that everything runs");
    app.add_flag("--soak", cfg.soak,
                 "only the soak: tpsnoop, tphist and forksnoop under a storm, memory, descriptors "
                 "and counts at the start and the end");
    app.add_option("--soak-seconds", cfg.soak_seconds, "how long each tool soaks (default 600)");
    app.add_option("--rounds", cfg.rounds, "rounds of each comparison (default 5)");
    app.add_option("--bin-dir", cfg.bin_dir, "where tpkit's tools are");
    app.add_option("-o,--out", cfg.out, "the JSON results file");
    app.add_option("--only", cfg.only,
                   "run only these parts: read-hist, syscall-scale, syscall-untraced, read-stream, fork-stream, syscall-count, "
                   "sched-runqlat, sched-cpudist, sched-offcputime, sched-wakeuptime, block-biolatency, block-bitesize, "
                   "block-biopattern, block-hardirqs, tcp-softirqs, tcp-tcpstates, tcp-tcplife, "
                   "keys, rate, glob-scale, glob-exit, fixed")
        ->delimiter(',');
    CLI11_PARSE(app, argc, argv);
    if (cfg.smoke) {
        cfg.rounds = 1;
        cfg.stream_rounds = 1;
        cfg.read_ops = 20'000;
        cfg.stream_ops = 20'000;
        cfg.slow_stream_ops = 2'000;
        cfg.fork_ops = 50;
        cfg.syscall_ops = 20'000;
        cfg.switch_ops = 5'000;
        cfg.blockio_ops = 500;
        cfg.connect_ops = 500;
        cfg.drop_ops = 100'000;
        cfg.slow_drop_ops = 10'000;
        cfg.fixed_seconds = 0.2;
        cfg.rates = {50'000};
        cfg.fork_rates = {500};
        cfg.first_producers = 2; // the threads of the workload run too
        cfg.rate_seconds = 0.1;
        cfg.key_counts = {10, 20'000};
        cfg.key_procs = {10};
        cfg.key_ops = 100'000;
        cfg.key_rate = 500'000;
        cfg.key_interval = 0.1;
    } else {
        cfg.stream_rounds = std::max(1, std::min(cfg.rounds, 3));
    }

    if (geteuid() != 0) {
        const char* require = std::getenv("TPKIT_REQUIRE_BPF");
        if (require && std::string(require) == "1") {
            fmt::print(stderr, "tpbench: TPKIT_REQUIRE_BPF=1 but not running as root\n");
            return 1;
        }
        fmt::print(stderr, "tpbench: skipped: loading BPF programs needs root\n");
        return 77;
    }
    try {
        if (cfg.soak)
            return run_soak(cfg);
        return run_all(cfg);
    } catch (const std::exception& e) {
        fmt::print(stderr, "tpbench: {}\n", e.what());
        return 1;
    }
}
