// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// syscount: the syscalls of the machine counted in the kernel, by syscall or by process, with
// their time (-L); bcc's syscount's options and tables.
#include "syscount.h"
#include "syscount.skel.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <tpkit/cli.hpp>
#include <tpkit/columns.hpp>
#include <tpkit/maps.hpp>
#include <tpkit/metrics.hpp>
#include <tpkit/skeleton.hpp>
#include <tpkit/stream.hpp>
#include <tpkit/syscalls.hpp>

#include <fmt/core.h>

#include <utility>
#include <sys/user.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <map>
#include <tuple>

namespace {

constexpr const char* examples = R"(  syscount                  # the ten most frequent syscalls, at Ctrl-C
  syscount -i 1             # every second (also: syscount 1)
  syscount -p 181 -T 20     # the twenty most frequent syscalls of PID 181
  syscount -L -m            # time spent in each syscall, in milliseconds
  syscount -P               # by process instead of by syscall
  syscount -x               # failed syscalls only
  syscount -e ENOENT -P     # the processes whose syscalls fail with ENOENT
  syscount --syscall openat -P --json -d 10
  syscount -l               # the syscalls this build knows by name
)";

// Processes each half of the by-process map holds: those seen in an interval.
constexpr std::uint32_t max_processes = 10240;

struct Options {
    std::size_t top = 10;
    double interval = 0;
    bool failures = false;
    std::string errno_text;
    std::string syscall_text;
    bool latency = false;
    bool milliseconds = false;
    bool by_process = false;
    bool list = false;
};

void list_syscalls()
{
    for (const tpkit::Syscall& s : tpkit::syscalls())
        tpkit::standard_output().print("{:3}: {}\n", s.number, s.name);
}

struct Row {
    std::string syscall; // by syscall
    std::uint32_t pid;   // by process
    std::string comm;
    std::uint64_t count, total_ns;
};

// What was counted since the previous call, in either map.
class Counts {
public:
    // Before load: only the map of the chosen key is sized for use.
    Counts(const Options& options, syscount_bpf& skel)
        : by_process_(options.by_process),
          by_syscall_(skel.maps.by_syscall),
          processes_(skel.maps.by_process, skel.maps.by_process_a, skel.maps.by_process_b),
          process_names_(skel.maps.process_names)
    {
        processes_.set_max_entries(by_process_ ? max_processes : 1);
        tpkit::check_libbpf(bpf_map__set_max_entries(process_names_, by_process_ ? max_processes : 1),
                            "cannot size syscount's map");
        tpkit::check_libbpf(
            bpf_map__set_max_entries(skel.maps.by_syscall, by_process_ ? 1 : SYSCOUNT_MAX_SYSCALLS),
            "cannot size syscount's map");
    }

    std::vector<Row> take()
    {
        std::vector<Row> rows;
        if (by_process_)
            return process_rows();
        auto growth = by_syscall_.increase();
        for (std::uint32_t nr = 0; nr < growth.size(); nr++)
            if (const std::uint64_t count = growth[nr].at(0))
                rows.push_back({tpkit::syscall_text(nr), 0, "", count, growth[nr].at(1)});
        return rows;
    }

private:
    // One row per process, named as BPF saw its calling thread when it last first-counted it in
    // an interval (so a rename by exec shows from the next interval). A name is kept while its
    // process lives, and forgotten one interval after it was seen gone: its last syscalls may
    // have been counted in the half BPF took over at this drain.
    std::vector<Row> process_rows()
    {
        std::vector<Row> rows;
        std::vector<std::uint32_t> gone;
        const int names = bpf_map__fd(process_names_);
        for (const auto& entry : processes_.drain()) {
            const auto pid = entry.key_as<std::uint32_t>();
            char comm[TPKIT_COMM_LEN] = {};
            if (bpf_map_lookup_elem(names, &pid, comm) != 0)
                comm[0] = '\0'; // the map of names was full: /proc's name, or none
            else if (access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0)
                gone.push_back(pid);
            rows.push_back({"", pid, std::string(tpkit::text_of(comm)), entry.counters.at(0),
                            entry.counters.at(1)});
        }
        for (std::uint32_t pid : std::exchange(gone_, std::move(gone)))
            bpf_map_delete_elem(names, &pid);
        return rows;
    }

    bool by_process_;
    tpkit::ArrayGrowth by_syscall_;
    tpkit::SwappedMap processes_;
    bpf_map* process_names_;
    std::vector<std::uint32_t> gone_; // processes seen gone at the previous drain
};

// A process's name as bcc shows it, its main thread's, for those still running.
void name_from_proc(std::vector<Row>& rows)
{
    for (Row& row : rows) {
        std::ifstream proc_comm("/proc/" + std::to_string(row.pid) + "/comm");
        std::string name;
        if (std::getline(proc_comm, name) && !name.empty())
            row.comm = name;
    }
}

// The counts (and times) since the previous call, largest first, the top ones.
tpkit::Reading collect(const Options& options, Counts& counts, tpkit::MissedWatch& missed)
{
    std::vector<Row> rows = counts.take();
    auto order = [&](const Row& r) { return options.latency ? r.total_ns : r.count; };
    std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
        if (order(a) != order(b))
            return order(a) > order(b);
        return std::tie(a.pid, a.comm, a.syscall) < std::tie(b.pid, b.comm, b.syscall);
    });
    if (rows.size() > options.top)
        rows.resize(options.top);
    if (options.by_process)
        name_from_proc(rows);
    missed.report();

    tpkit::Reading reading;
    if (options.by_process)
        reading.counter_labels = {"pid", "comm"};
    else
        reading.counter_labels = {"syscall"};
    if (options.latency) {
        const std::string unit = options.milliseconds ? "ms" : "us";
        const std::uint64_t divisor = options.milliseconds ? 1'000'000 : 1'000;
        reading.counter_columns = {{"COUNT", "count", 1, 0, ""},
                                   {"TIME (" + unit + ")", "time", divisor, 3, ""},
                                   {"AVG (" + unit + ")", "time", divisor, 3, "count"}};
    }
    for (const Row& r : rows) {
        std::vector<tpkit::Label> labels;
        if (options.by_process)
            labels = {{"pid", std::to_string(r.pid), true}, {"comm", r.comm, false}};
        else
            labels = {{"syscall", r.syscall, false}};
        reading.metrics.push_back({"count", "syscalls", "", labels, r.count});
        if (options.latency)
            reading.metrics.push_back({"time", "time in syscalls", "ns", labels, r.total_ns});
    }
    return reading;
}

void run(const Options& options, tpkit::CommonOptions common)
{
    const int only_errno = options.errno_text.empty() ? 0 : tpkit::parse_errno(options.errno_text);
    const std::uint32_t only_syscall = options.syscall_text.empty()
                                           ? SYSCOUNT_EVERY_SYSCALL
                                           : tpkit::parse_syscall(options.syscall_text);
    if (options.interval > 0 && common.interval > 0)
        throw tpkit::Error(tpkit::Exit::usage, "give the interval once: -i or [interval]");
    common.interval = std::max(common.interval, options.interval);
    common.timestamp = true; // like bcc's, every table is headed by its time

    auto skel = tpkit::Skeleton<syscount_bpf>::open("syscount");
    tpkit::apply_task_filters(*skel, common);
    skel->rodata->count_by_process = options.by_process;
    skel->rodata->with_latency = options.latency;
    skel->rodata->failed_only = options.failures;
    skel->rodata->only_errno = static_cast<std::uint32_t>(only_errno);
    skel->rodata->only_syscall = only_syscall;
    skel->rodata->orig_ax_offset = offsetof(user_regs_struct, orig_rax); // as in struct pt_regs
    // Counted at entry unless the return value or the time since entry matters.
    const bool at_exit = options.latency || options.failures || only_errno;
    const char* what = "cannot choose syscount's programs";
    tpkit::check_libbpf(bpf_program__set_autoload(skel->progs.count_enter, !at_exit), what);
    tpkit::check_libbpf(bpf_program__set_autoload(skel->progs.start_enter, options.latency), what);
    tpkit::check_libbpf(bpf_program__set_autoload(skel->progs.count_exit, at_exit), what);
    Counts counts(options, *skel);
    skel.load();
    skel.attach();

    std::string too_many = options.by_process
                               ? fmt::format("more than {} processes in an interval", max_processes)
                               : fmt::format("syscall numbers of {} or more", SYSCOUNT_MAX_SYSCALLS);
    if (options.latency)
        too_many += ", or no memory for a thread's entry time";
    tpkit::MissedWatch missed("syscount", skel->maps.tpkit_missed, too_many);
    tpkit::StopSignal stop(common.duration);
    tpkit::run_aggregate(common, stop, [&] { return collect(options, counts, missed); });
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("syscount", "Count syscalls, by syscall or by process, in the kernel.", examples);
    Options options;
    cli.add_common();
    // -T is bcc's --top here; every table is headed by its time anyway.
    cli.app().remove_option(cli.app().get_option("--timestamp"));
    cli.add_interval_count();
    auto& app = cli.app();
    app.add_option("-T,--top", options.top, "print only the N most frequent (default 10)")
        ->check(CLI::Range(std::size_t(1), std::size_t(1) << 30));
    app.add_option("-i,--interval", options.interval, "print every SECONDS (as [interval])")
        ->check(CLI::PositiveNumber);
    app.add_flag("-x,--failures", options.failures, "only failed syscalls");
    app.add_option("-e,--errno", options.errno_text,
                   "only syscalls failing with this error (ENOENT or a number)");
    app.add_option("--syscall", options.syscall_text, "only this syscall (a name of -l or a number)");
    app.add_flag("-L,--latency", options.latency, "time in syscalls too, sorted by it");
    app.add_flag("-m,--milliseconds", options.milliseconds, "times in ms (default: us)");
    app.add_flag("-P,--process", options.by_process, "by process instead of by syscall");
    app.add_flag("-l,--list", options.list, "list the syscalls known by name and exit");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        if (options.list)
            list_syscalls();
        else
            run(options, cli.options());
    });
}
