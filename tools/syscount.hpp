// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// syscount's collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include "syscount.h"
#include "syscount.skel.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/kernel/syscalls.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/run/stream.hpp>

#include <fmt/core.h>

#include <utility>
#include <sys/user.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

namespace tpkit::syscount {

// Processes each half of the by-process map holds: those seen in an interval.
inline constexpr std::uint32_t max_processes = 10240;

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
        check_libbpf(bpf_map__set_max_entries(process_names_, by_process_ ? max_processes : 1),
                            "cannot size syscount's map");
        check_libbpf(
            bpf_map__set_max_entries(skel.maps.by_syscall, by_process_ ? 1 : SYSCOUNT_MAX_SYSCALLS),
            "cannot size syscount's map");
    }

    std::vector<Row> take(Drain drain)
    {
        std::vector<Row> rows;
        if (by_process_)
            return process_rows(drain);
        auto growth = by_syscall_.increase();
        for (std::uint32_t nr = 0; nr < growth.size(); nr++)
            if (const std::uint64_t count = growth[nr].at(0))
                rows.push_back({syscall_text(nr), 0, "", count, growth[nr].at(1)});
        return rows;
    }

private:
    // One row per process, named as BPF saw its calling thread when it last first-counted it in
    // an interval (so a rename by exec shows from the next interval). A name is kept while its
    // process lives, and forgotten one interval after it was seen gone: its last syscalls may
    // have been counted in the half BPF took over at this drain.
    std::vector<Row> process_rows(Drain drain)
    {
        std::vector<Row> rows;
        std::vector<std::uint32_t> gone;
        const int names = bpf_map__fd(process_names_);
        for (const auto& entry : processes_.drain(drain)) {
            const auto pid = entry.key_as<std::uint32_t>();
            char comm[TPKIT_COMM_LEN] = {};
            if (bpf_map_lookup_elem(names, &pid, comm) != 0)
                comm[0] = '\0'; // the map of names was full: /proc's name, or none
            else if (access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0)
                gone.push_back(pid);
            rows.push_back({"", pid, std::string(text_of(comm)), entry.counters.at(0),
                            entry.counters.at(1)});
        }
        for (std::uint32_t pid : std::exchange(gone_, std::move(gone)))
            bpf_map_delete_elem(names, &pid);
        return rows;
    }

    bool by_process_;
    ArrayGrowth by_syscall_;
    SwappedMap processes_;
    bpf_map* process_names_;
    std::vector<std::uint32_t> gone_; // processes seen gone at the previous drain
};

// A process's name as bcc shows it, its main thread's, for those still running.
inline void name_from_proc(std::vector<Row>& rows)
{
    for (Row& row : rows) {
        std::ifstream proc_comm("/proc/" + std::to_string(row.pid) + "/comm");
        std::string name;
        if (std::getline(proc_comm, name) && !name.empty())
            row.comm = name;
    }
}

// The counts (and times) since the previous call, largest first, the top ones.
inline Reading collect(const Options& options, Counts& counts, MissedWatch& missed, Drain drain)
{
    std::vector<Row> rows = counts.take(drain);
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

    Reading reading;
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
        std::vector<Label> labels;
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

// What selects and splits the counts: -x, -e, --syscall, -L, -m, -P.
inline void add_options(Cli& cli, Options& options)
{
    cli.flag("-x,--failures", options.failures, "only failed syscalls");
    cli.option("-e,--errno", options.errno_text,
               "only syscalls failing with this error (ENOENT or a number)");
    cli.option("--syscall", options.syscall_text, "only this syscall (a name of -l or a number)");
    cli.flag("-L,--latency", options.latency, "time in syscalls too, sorted by it");
    cli.flag("-m,--milliseconds", options.milliseconds, "times in ms (default: us)");
    cli.flag("-P,--process", options.by_process, "by process instead of by syscall");
}

inline std::unique_ptr<Collector> open(const Cli& cli, const Options& options)
{
    const int only_errno = options.errno_text.empty() ? 0 : parse_errno(options.errno_text);
    const std::uint32_t only_syscall = options.syscall_text.empty()
                                           ? SYSCOUNT_EVERY_SYSCALL
                                           : parse_syscall(options.syscall_text);
    struct State {
        Skeleton<syscount_bpf> skel;
        std::optional<Counts> counts;
        std::optional<MissedWatch> missed;
    };
    auto state = std::make_shared<State>(State{Skeleton<syscount_bpf>::open(cli.name()), {}, {}});
    auto& skel = state->skel;
    apply_task_filters(*skel, cli.options());
    skel->rodata->count_by_process = options.by_process;
    skel->rodata->with_latency = options.latency;
    skel->rodata->failed_only = options.failures;
    skel->rodata->only_errno = static_cast<std::uint32_t>(only_errno);
    skel->rodata->only_syscall = only_syscall;
    skel->rodata->orig_ax_offset = offsetof(user_regs_struct, orig_rax); // as in struct pt_regs
    // Counted at entry unless the return value or the time since entry matters.
    const bool at_exit = options.latency || options.failures || only_errno;
    const char* what = "cannot choose syscount's programs";
    check_libbpf(bpf_program__set_autoload(skel->progs.count_enter, !at_exit), what);
    check_libbpf(bpf_program__set_autoload(skel->progs.start_enter, options.latency), what);
    check_libbpf(bpf_program__set_autoload(skel->progs.count_exit, at_exit), what);
    state->counts.emplace(options, *skel);
    skel.load();
    skel.attach();

    std::string too_many = options.by_process
                               ? fmt::format("more than {} processes in an interval", max_processes)
                               : fmt::format("syscall numbers of {} or more", SYSCOUNT_MAX_SYSCALLS);
    if (options.latency)
        too_many += ", or no memory for a thread's entry time";
    state->missed.emplace(cli.name(), skel->maps.tpkit_missed, too_many);
    State& s = *state;
    return std::make_unique<CollectorOf>(
        state, std::vector<bpf_object*>{s.skel->obj},
        [&s, options](Drain drain) { return collect(options, *s.counts, *s.missed, drain); },
        [&s] { return s.missed->total(); });
}

} // namespace tpkit::syscount
