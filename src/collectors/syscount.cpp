// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/syscount.hpp"

#include <tpkit/tools/syscount.h>
#include "syscount.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/kernel/syscalls.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/run/task_filters.hpp>

#include <bpf/bpf.h>
#include <fmt/core.h>
#include <sys/user.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <tuple>
#include <utility>
#include <vector>

namespace tpkit::syscount {
namespace {

struct Row {
    std::string syscall; // by syscall
    std::uint32_t pid;   // by process
    std::string comm;
    std::uint64_t count, total_ns;
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

// The counts of either map: by syscall, or (-P) by process.
class Collector : public SkeletonCollector<syscount_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options),
          by_syscall_(skel_->maps.by_syscall),
          processes_(skel_->maps.by_process, skel_->maps.by_process_a, skel_->maps.by_process_b),
          process_names_(skel_->maps.process_names)
    {
        // Only the map of the chosen key is sized for use.
        const bool by_process = options.by_process;
        processes_.set_max_entries(by_process ? max_processes : 1);
        check_libbpf(bpf_map__set_max_entries(process_names_, by_process ? max_processes : 1),
                     "cannot size syscount's map");
        check_libbpf(bpf_map__set_max_entries(skel_->maps.by_syscall,
                                              by_process ? 1 : SYSCOUNT_MAX_SYSCALLS),
                     "cannot size syscount's map");
        std::string too_many =
            by_process ? fmt::format("more than {} processes in an interval", max_processes)
                       : fmt::format("syscall numbers of {} or more", SYSCOUNT_MAX_SYSCALLS);
        if (options.latency)
            too_many += ", or no memory for a thread's entry time";
        load_and_attach(too_many);
    }

    Reading collect(Drain drain) override
    {
        std::vector<Row> rows = options_.by_process ? process_rows(drain) : syscall_rows();
        auto order = [&](const Row& r) { return options_.latency ? r.total_ns : r.count; };
        std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
            if (order(a) != order(b))
                return order(a) > order(b);
            return std::tie(a.pid, a.comm, a.syscall) < std::tie(b.pid, b.comm, b.syscall);
        });
        if (rows.size() > options_.top)
            rows.resize(options_.top);
        if (options_.by_process)
            name_from_proc(rows);
        report_missed();
        return reading(rows);
    }

private:
    static Skeleton<syscount_bpf> opened(const Cli& cli, const Options& options)
    {
        const int only_errno = options.errno_text.empty() ? 0 : parse_errno(options.errno_text);
        const std::uint32_t only_syscall = options.syscall_text.empty()
                                               ? SYSCOUNT_EVERY_SYSCALL
                                               : parse_syscall(options.syscall_text);
        auto skel = Skeleton<syscount_bpf>::open(cli.name());
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
        return skel;
    }

    std::vector<Row> syscall_rows()
    {
        std::vector<Row> rows;
        auto growth = by_syscall_.increase();
        for (std::uint32_t nr = 0; nr < growth.size(); nr++)
            if (const std::uint64_t count = growth[nr].at(0))
                rows.push_back({syscall_text(nr), 0, "", count, growth[nr].at(1)});
        return rows;
    }

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

    Reading reading(const std::vector<Row>& rows) const
    {
        Reading reading;
        if (options_.by_process)
            reading.counter_labels = {"pid", "comm"};
        else
            reading.counter_labels = {"syscall"};
        if (options_.latency) {
            const std::string unit = options_.milliseconds ? "ms" : "us";
            const std::uint64_t divisor = options_.milliseconds ? 1'000'000 : 1'000;
            reading.counter_columns = {{"COUNT", "count", 1, 0, ""},
                                       {"TIME (" + unit + ")", "time", divisor, 3, ""},
                                       {"AVG (" + unit + ")", "time", divisor, 3, "count"}};
        }
        for (const Row& r : rows) {
            std::vector<Label> labels;
            if (options_.by_process)
                labels = {{"pid", std::to_string(r.pid), true}, {"comm", r.comm, false}};
            else
                labels = {{"syscall", r.syscall, false}};
            reading.metrics.push_back({"count", "syscalls", "", labels, r.count});
            if (options_.latency)
                reading.metrics.push_back({"time", "time in syscalls", "ns", labels, r.total_ns});
        }
        return reading;
    }

    Options options_;
    ArrayGrowth by_syscall_;
    SwappedMap processes_;
    bpf_map* process_names_;
    std::vector<std::uint32_t> gone_; // processes seen gone at the previous drain
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    cli.flag("-x,--failures", options.failures, "only failed syscalls");
    cli.option("-e,--errno", options.errno_text,
               "only syscalls failing with this error (ENOENT or a number)");
    cli.option("--syscall", options.syscall_text, "only this syscall (a name of -l or a number)");
    cli.flag("-L,--latency", options.latency, "time in syscalls too, sorted by it");
    cli.flag("-m,--milliseconds", options.milliseconds, "times in ms (default: us)");
    cli.flag("-P,--process", options.by_process, "by process instead of by syscall");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::syscount
