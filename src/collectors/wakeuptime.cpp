// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/wakeuptime.hpp"

#include "wakeuptime.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/kernel/symbols.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/run/stack_symbolizer.hpp>
#include <tpkit/run/task_filters.hpp>
#include <tpkit/support/json.hpp>

#include <bpf/bpf.h>
#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpkit::wakeuptime {
namespace {

// A stack ID bpf_get_stackid() never returns (-EPERM): every key has its waker's stack.
constexpr int no_stack = -1;

// The time one waker woke one target from one place, the waker's frames innermost first.
struct Woken {
    wakeuptime_key key;
    wakeuptime_value value;
    std::vector<std::string> stack;
};

// The time blocked by waker, waker stack and target, from the map BPF adds to.
class Collector : public SkeletonCollector<wakeuptime_bpf, tpkit::Collector> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options)
    {
        load_and_attach(fmt::format("more than {} threads asleep at once, or wakers, targets and "
                                    "stacks in all",
                                    TPKIT_TIMING_MAX_ENTRIES));
        // The kernel's symbols are read from attach on, on a thread of their own: ready when the
        // stacks print, at the end.
        symbolizer_.emplace(bpf_map__fd(skel_->maps.stacks), options.stack_depth, no_stack,
                            options.offsets);
        symbolizer_->read_kernel_symbols_from(KernelSymbolsInBackground());
    }

    // No banner in the output (bcc prints one there), as offcputime.
    void print(Drain, const CommonOptions& options, Output& out) override
    {
        write(collect(), options, out);
        if (const std::uint64_t uncounted = report_missed(); uncounted && options.json)
            out.print("{}\n", lost_json({.not_counted = uncounted}, now_ns(options.clock)));
        symbolizer_->report_missed("wakeuptime");
    }

private:
    static Skeleton<wakeuptime_bpf> opened(const Cli& cli, const Options& options)
    {
        if (options.min_us > options.max_us)
            throw Error(Exit::usage, "-m must not be more than -M");
        auto skel = Skeleton<wakeuptime_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        skel->rodata->user_threads_only = options.user_threads;
        skel->rodata->min_block_us = options.min_us;
        skel->rodata->max_block_us = options.max_us;
        size_stack_map(skel->maps.stacks, options.stack_storage, options.stack_depth);
        return skel;
    }

    std::vector<Woken> collect()
    {
        std::vector<Woken> all;
        const int fd = bpf_map__fd(skel_->maps.blocked);
        wakeuptime_key key{}, next{};
        for (void* prev = nullptr; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
            key = next;
            Woken w{key, {}, {}};
            if (bpf_map_lookup_elem(fd, &key, &w.value) != 0 || w.value.count == 0)
                continue;
            w.stack = symbolizer_->kernel(key.waker_stack_id);
            all.push_back(std::move(w));
        }
        // bcc's order: the longest last, nearest the prompt.
        std::sort(all.begin(), all.end(), [](const Woken& a, const Woken& b) {
            return a.value.total_ns < b.value.total_ns;
        });
        return all;
    }

    void write(const std::vector<Woken>& all, const CommonOptions& options, Output& out) const
    {
        const std::int64_t end_ns = now_ns(options.clock);
        for (const Woken& w : all) {
            const std::string_view target = text_of(w.key.target), waker = text_of(w.key.waker);
            const std::uint64_t us = w.value.total_ns / 1000;
            if (options.json) {
                out.print("{}\n", JsonObject()
                                      .add("type", "count")
                                      .add("time_ns", end_ns)
                                      .add("target", target)
                                      .add("waker", waker)
                                      .add("total_us", us)
                                      .add("count", w.value.count)
                                      .add_raw("waker_stack", json_string_array(w.stack))
                                      .str());
            } else if (options_.folded) {
                // bcc's: waker;frames outermost first;target, then the time.
                std::string line(waker);
                for (auto it = w.stack.rbegin(); it != w.stack.rend(); ++it)
                    line += ';' + *it;
                out.print("{};{} {}\n", line, target, us);
            } else {
                out.print("    {:<16} {}\n", "target:", target);
                for (const auto& f : w.stack)
                    out.print("    {}\n", f);
                out.print("    {:<16} {}\n        {}\n\n", "waker:", waker, us);
            }
        }
    }

    Options options_;
    std::optional<StackSymbolizer> symbolizer_; // once attached
};

} // namespace

void add_options(Cli& cli, Options& o)
{
    cli.flag("-u,--user-threads-only", o.user_threads, "user threads only (no kernel threads)");
    cli.flag("-f,--folded", o.folded, "folded stacks (waker;frames…;target time), for flame graphs")
        .excludes("--json");
    cli.flag("-s,--offset", o.offsets, "show symbol offsets (try_to_wake_up+0x3a)");
    cli.option("-m,--min-block-time", o.min_us, "only blocks of at least MIN microseconds (default 1)")
        .type_name("MIN");
    cli.option("-M,--max-block-time", o.max_us, "only blocks of at most MAX microseconds")
        .type_name("MAX");
    add_stack_storage_option(cli, o.stack_storage);
    add_stack_depth_option(cli, o.stack_depth, WAKEUPTIME_MAX_STACK_DEPTH, "each stack");
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

} // namespace tpkit::wakeuptime
