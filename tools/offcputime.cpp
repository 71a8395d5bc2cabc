// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offcputime: time threads spend blocked (off-CPU), by kernel and user stack, symbolized.
// Stacks are printed by this file rather than as a tpkit::Reading: a Reading's labels are
// single strings, and a stack is a list of frames (an array in JSON, a folded line for flame
// graphs).
#include "offcputime.h"
#include "offcputime.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/kernel/symbols.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/run/stack_symbolizer.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>
#include <tpkit/support/json.hpp>

#include <bpf/bpf.h>
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <optional>

namespace {

constexpr const char* examples = R"(  offcputime                # off-CPU time by stack, until Ctrl-C
  offcputime 5              # for 5 seconds
  offcputime -f 5 > folded  # folded stacks, for flamegraph.pl
  offcputime -m 1000        # only blocks of more than 1000 us
  offcputime -M 10000       # only blocks of less than 10000 us
  offcputime -p 185         # only threads of process 185
  offcputime -t 188         # only thread 188
  offcputime -u             # only user threads (no kernel threads)
  offcputime -k             # only kernel threads
  offcputime -U             # user stacks only
  offcputime -K             # kernel stacks only
  offcputime --state 2      # only uninterruptible sleeps (TASK_UNINTERRUPTIBLE)
  offcputime --json -d 5    # one JSON object per stack
)";

struct Options {
    bool user_threads = false, kernel_threads = false;
    bool user_stacks_only = false, kernel_stacks_only = false;
    bool folded = false, offsets = false;
    std::uint64_t min_us = 1, max_us = UINT64_MAX;
    std::optional<std::uint32_t> state;
    std::optional<double> duration; // bcc's positional [duration]
    std::uint32_t stack_storage = 16384;
    std::uint32_t stack_depth = OFFCPUTIME_MAX_STACK_DEPTH;
};

// One thread's time at one place, its frames innermost first.
struct Blocked {
    offcputime_key key;
    offcputime_value value;
    std::vector<std::string> kernel, user;
};

std::vector<Blocked> collect(offcputime_bpf& skel, tpkit::StackSymbolizer& symbolizer)
{
    std::vector<Blocked> all;
    const int fd = bpf_map__fd(skel.maps.offcpu);
    offcputime_key key{}, next{};
    for (void* prev = nullptr; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
        key = next;
        Blocked b{key, {}, {}, {}};
        if (bpf_map_lookup_elem(fd, &key, &b.value) != 0 || b.value.count == 0)
            continue;
        b.kernel = symbolizer.kernel(key.kernel_stack_id);
        b.user = symbolizer.user(key.user_stack_id, static_cast<pid_t>(key.pid));
        all.push_back(std::move(b));
    }
    // bcc's order: the longest last, nearest the prompt.
    std::sort(all.begin(), all.end(), [](const Blocked& a, const Blocked& b) {
        return a.value.total_ns < b.value.total_ns;
    });
    return all;
}

void print(const std::vector<Blocked>& all, const Options& options,
           const tpkit::CommonOptions& common, tpkit::Output& out)
{
    const bool json = common.json;
    const std::int64_t end_ns = tpkit::now_ns(common.clock);
    for (const Blocked& b : all) {
        const std::string_view comm = tpkit::text_of(b.key.comm);
        const std::uint64_t us = b.value.total_ns / 1000;
        if (json) {
            out.print("{}\n", tpkit::JsonObject()
                                  .add("type", "count")
                                  .add("time_ns", end_ns)
                                  .add("pid", b.key.pid)
                                  .add("tid", b.key.tid)
                                  .add("comm", comm)
                                  .add("total_us", us)
                                  .add("count", b.value.count)
                                  .add_raw("kernel_stack", tpkit::json_string_array(b.kernel))
                                  .add_raw("user_stack", tpkit::json_string_array(b.user))
                                  .str());
        } else if (options.folded) {
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

void add_options(tpkit::Cli& cli, Options& o)
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
    tpkit::add_stack_storage_option(cli, o.stack_storage);
    cli.option("--perf-max-stack-depth", o.stack_depth,
               fmt::format("frames kept of each stack, kernel and user (default and most {})",
                           OFFCPUTIME_MAX_STACK_DEPTH))
        .range(1u, unsigned(OFFCPUTIME_MAX_STACK_DEPTH));
    cli.option("duration", o.duration, "trace for SECONDS (as -d)")
        .positive()
        .excludes("--duration")
        .type_name("SECONDS");
    cli.add_map_memory();
}

void run(const Options& options, tpkit::CommonOptions common)
{
    if (options.min_us > options.max_us)
        throw tpkit::Error(tpkit::Exit::usage, "-m must not be more than -M");
    if (options.duration)
        common.duration = *options.duration;

    auto skel = tpkit::Skeleton<offcputime_bpf>::open("offcputime");
    tpkit::apply_task_filters(*skel, common);
    skel->rodata->user_threads_only = options.user_threads;
    skel->rodata->kernel_threads_only = options.kernel_threads;
    skel->rodata->user_stacks = !options.kernel_stacks_only;
    skel->rodata->kernel_stacks = !options.user_stacks_only;
    skel->rodata->min_block_us = options.min_us;
    skel->rodata->max_block_us = options.max_us;
    skel->rodata->state_filter = options.state ? std::int64_t(*options.state) : -1;
    tpkit::check_libbpf(bpf_map__set_max_entries(skel->maps.stacks, options.stack_storage),
                        "cannot size the stack map");
    tpkit::check_libbpf(bpf_map__set_value_size(skel->maps.stacks,
                                                options.stack_depth * sizeof(std::uint64_t)),
                        "cannot size the stack map's stacks");
    skel.load();
    skel.attach();

    // No banner in the output (bcc prints one there): StopSignal says "Tracing…" on a
    // terminal's stderr, and --ready-fd tells a script.
    tpkit::Output& out = tpkit::standard_output();
    tpkit::MissedWatch missed("offcputime", skel->maps.tpkit_missed,
                              fmt::format("more than {} threads blocked at once, or thread "
                                          "stacks in all", TPKIT_TIMING_MAX_ENTRIES));
    // The kernel's symbols are read from attach on, on a thread of their own: ready when the
    // stacks print, at the end.
    tpkit::StackSymbolizer symbolizer(bpf_map__fd(skel->maps.stacks), options.stack_depth,
                               OFFCPUTIME_NO_STACK, options.offsets);
    symbolizer.read_kernel_symbols_from(tpkit::KernelSymbolsInBackground());
    tpkit::StopSignal stop(common);
    tpkit::run_intervals(common, stop, [&](tpkit::Drain) {
        print(collect(*skel, symbolizer), options, common, out);
        if (const std::uint64_t uncounted = missed.report(); uncounted && common.json)
            out.print("{}\n", tpkit::lost_json({.not_counted = uncounted}, tpkit::now_ns(common.clock)));
        if (symbolizer.missed())
            fmt::print(stderr, "offcputime: {} stacks could not be recorded (raise --stack-storage-size)\n",
                       symbolizer.missed());
    });
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("offcputime", "Summarize off-CPU time by stack: where threads block, and for how long.",
                   examples);
    Options options;
    cli.add_common();
    add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] { run(options, cli.options()); });
}
