// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/offcputime.hpp"

#include "offcputime.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/kernel/symbols.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/run/stack_symbolizer.hpp>
#include <tpkit/limits.h>
#include <tpkit/run/task_filters.hpp>
#include <tpkit/support/json.hpp>

#include <bpf/bpf.h>
#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpkit::offcputime {
namespace {

// One thread's time at one place, its frames innermost first.
struct Blocked {
    offcputime_key key;
    offcputime_value value;
    std::vector<std::string> kernel, user;
};

// The time blocked by thread and stacks, from the map BPF adds to.
class Collector : public SkeletonCollector<offcputime_bpf, tpkit::Collector> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options)
    {
        load_and_attach(fmt::format("more than {} threads blocked at once, or thread stacks in all",
                                    TPKIT_TIMING_MAX_ENTRIES));
        // The kernel's symbols are read from attach on, on a thread of their own: ready when the
        // stacks print, at the end.
        symbolizer_.emplace(bpf_map__fd(skel_->maps.stacks), options.stack_depth,
                            OFFCPUTIME_NO_STACK, options.offsets);
        symbolizer_->read_kernel_symbols_from(KernelSymbolsInBackground());
    }

    // No banner in the output (bcc prints one there): StopSignal says "Tracing…" on a terminal's
    // stderr, and --ready-fd tells a script.
    void print(Drain, const CommonOptions& options, Output& out) override
    {
        write(collect(), options, out);
        if (const std::uint64_t uncounted = report_missed(); uncounted && options.json)
            out.print("{}\n", lost_json({.not_counted = uncounted}, now_ns(options.clock)));
        symbolizer_->report_missed("offcputime");
    }

private:
    static Skeleton<offcputime_bpf> opened(const Cli& cli, const Options& options)
    {
        if (options.min_us > options.max_us)
            throw Error(Exit::usage, "-m must not be more than -M");
        auto skel = Skeleton<offcputime_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        skel->rodata->user_threads_only = options.user_threads;
        skel->rodata->kernel_threads_only = options.kernel_threads;
        skel->rodata->user_stacks = !options.kernel_stacks_only;
        skel->rodata->kernel_stacks = !options.user_stacks_only;
        skel->rodata->min_block_us = options.min_us;
        skel->rodata->max_block_us = options.max_us;
        skel->rodata->state_filter = options.state ? std::int64_t(*options.state) : -1;
        size_stack_map(skel->maps.stacks, options.stack_storage, options.stack_depth);
        return skel;
    }

    std::vector<Blocked> collect()
    {
        std::vector<Blocked> all;
        const int fd = bpf_map__fd(skel_->maps.offcpu);
        offcputime_key key{}, next{};
        for (void* prev = nullptr; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
            key = next;
            Blocked b{key, {}, {}, {}};
            if (bpf_map_lookup_elem(fd, &key, &b.value) != 0 || b.value.count == 0)
                continue;
            b.kernel = symbolizer_->kernel(key.kernel_stack_id);
            b.user = symbolizer_->user(key.user_stack_id, static_cast<pid_t>(key.pid));
            all.push_back(std::move(b));
        }
        // bcc's order: the longest last, nearest the prompt.
        std::sort(all.begin(), all.end(), [](const Blocked& a, const Blocked& b) {
            return a.value.total_ns < b.value.total_ns;
        });
        return all;
    }

    void write(const std::vector<Blocked>& all, const CommonOptions& options, Output& out) const
    {
        const bool json = options.json;
        const std::int64_t end_ns = now_ns(options.clock);
        for (const Blocked& b : all) {
            const std::string_view comm = text_of(b.key.comm);
            const std::uint64_t us = b.value.total_ns / 1000;
            if (json) {
                out.print("{}\n", JsonObject()
                                      .add("type", "count")
                                      .add("time_ns", end_ns)
                                      .add("pid", b.key.pid)
                                      .add("tid", b.key.tid)
                                      .add("comm", comm)
                                      .add("total_us", us)
                                      .add("count", b.value.count)
                                      .add_raw("kernel_stack", json_string_array(b.kernel))
                                      .add_raw("user_stack", json_string_array(b.user))
                                      .str());
            } else if (options_.folded) {
                // Outermost first: comm;user frames;kernel frames, then the time.
                std::string line(comm);
                for (auto it = b.user.rbegin(); it != b.user.rend(); ++it)
                    line += ';' + *it;
                for (auto it = b.kernel.rbegin(); it != b.kernel.rend(); ++it)
                    line += ';' + *it;
                out.print("{} {}\n", line, us);
            } else {
                for (const auto& f : b.kernel)
                    out.print("    {}\n", f);
                for (const auto& f : b.user)
                    out.print("    {}\n", f);
                out.print("    {:<16} {} ({})\n        {}\n\n", "-", comm, b.key.tid, us);
            }
        }
    }

    Options options_;
    std::optional<StackSymbolizer> symbolizer_; // once attached
};

} // namespace

void add_options(Cli& cli, Options& o)
{
    auto user = cli.flag("-u,--user-threads-only", o.user_threads, "user threads only");
    cli.flag("-k,--kernel-threads-only", o.kernel_threads, "kernel threads only").excludes(user);
    auto ustacks = cli.flag("-U,--user-stacks-only", o.user_stacks_only, "user stacks only");
    cli.flag("-K,--kernel-stacks-only", o.kernel_stacks_only, "kernel stacks only").excludes(ustacks);
    cli.flag("-f,--folded", o.folded, "folded stacks (comm;frames… time), for flame graphs")
        .excludes("--json");
    cli.flag("-s,--offset", o.offsets, "show symbol offsets (schedule+0x3a)");
    cli.option("-m,--min-block-time", o.min_us, "only blocks of at least MIN microseconds (default 1)")
        .type_name("MIN");
    cli.option("-M,--max-block-time", o.max_us, "only blocks of at most MAX microseconds")
        .type_name("MAX");
    cli.option("--state", o.state,
               "only tasks leaving the CPU in this state: 0 running (preempted), else a "
               "bitmask of include/linux/sched.h (1 interruptible, 2 uninterruptible)");
    add_stack_storage_option(cli, o.stack_storage);
    add_stack_depth_option(cli, o.stack_depth, OFFCPUTIME_MAX_STACK_DEPTH,
                           "each stack, kernel and user");
    cli.option("duration", o.duration, "trace for SECONDS (as -d)")
        .positive()
        .excludes("--duration")
        .type_name("SECONDS");
    cli.add_map_memory();
}

std::unique_ptr<tpkit::Collector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::offcputime
