// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/klockstat.hpp"

#include "klockstat.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/kernel/symbols.hpp>
#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/run/stack_symbolizer.hpp>
#include <tpkit/run/task_filters.hpp>
#include <tpkit/support/error.hpp>
#include <tpkit/support/json.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace tpkit::klockstat {
namespace {

constexpr std::size_t value_words = sizeof(klockstat_value) / sizeof(std::uint64_t);
static_assert(sizeof(klockstat_value) % sizeof(std::uint64_t) == 0);

// What one line of the table sums: stacks whose printed frames are the same are one line.
struct Line {
    std::vector<std::string> frames; // from the caller outwards, -s of them
    std::uint32_t flags = 0;
    std::uint64_t lock = 0;
    std::uint32_t pid = 0, tid = 0;

    auto tie() const { return std::tie(frames, flags, lock, pid, tid); }
    bool operator<(const Line& other) const { return tie() < other.tie(); }
};

struct Waits {
    std::uint64_t count = 0, total_ns = 0, max_ns = 0;
    std::string comm;
};

// libbpf-tools' time: the largest unit the time is at least one of, one decimal.
std::string wait_text(std::uint64_t ns)
{
    constexpr std::array<std::pair<double, const char*>, 5> units{
        {{1e9 * 3600, "h "}, {1e9 * 60, "m "}, {1e9, "s "}, {1e6, "ms"}, {1e3, "us"}}};
    for (const auto& [base, unit] : units)
        if (static_cast<double>(ns) >= base)
            return fmt::format("{:.1f} {}", static_cast<double>(ns) / base, unit);
    return fmt::format("{} ns", ns);
}

// -L's value: a kernel symbol's name, or an address in hexadecimal with 0x.
std::uint64_t lock_address(const std::string& text)
{
    if (text.starts_with("0x") || text.starts_with("0X")) {
        const std::string digits = text.substr(2);
        if (!digits.empty() && digits.size() <= 16 &&
            digits.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos)
            if (const std::uint64_t address = std::stoull(digits, nullptr, 16))
                return address;
        throw Error(Exit::usage, fmt::format("-L: '{}' is not a lock's address", text));
    }
    const auto addresses = KernelSymbols().addresses_of(text);
    if (addresses.empty())
        throw Error(Exit::usage, fmt::format("-L: no kernel symbol '{}' in /proc/kallsyms", text));
    if (addresses.size() > 1)
        throw Error(Exit::usage, fmt::format("-L: {} kernel symbols are named '{}': give an address",
                                             addresses.size(), text));
    return addresses.front();
}

class Collector : public SkeletonCollector<klockstat_bpf, tpkit::Collector> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options),
          waits_(skel_->maps.waits, skel_->maps.waits_a, skel_->maps.waits_b)
    {
        waits_.set_max_entries(max_keys);
        load_and_attach(fmt::format("more than 10240 threads in a contention at once, contentions "
                                    "nested more than {} deep, or more than {} callers and locks "
                                    "in an interval",
                                    KLOCKSTAT_NESTING, max_keys));
        symbolizer_.emplace(bpf_map__fd(skel_->maps.stacks), KLOCKSTAT_MAX_STACK_DEPTH,
                            KLOCKSTAT_NO_STACK, false);
        symbolizer_->read_kernel_symbols_from(KernelSymbolsInBackground());
    }

    void print(Drain drain, const CommonOptions& options, Output& out) override
    {
        if (options_.reset)
            lines_.clear();
        for (const auto& entry : waits_.drain(drain)) {
            if (entry.counters.size() != value_words)
                throw Error(Exit::failure, "klockstat: a value of an unexpected size");
            klockstat_value value;
            std::memcpy(&value, entry.counters.data(), sizeof(value));
            const auto key = entry.key_as<klockstat_key>();
            Line line{options_.per_thread ? std::vector<std::string>{} : caller_frames(key.stack_id),
                      key.flags, key.lock, key.pid, key.tid};
            if (!options_.caller.empty() &&
                (line.frames.empty() || !line.frames.front().starts_with(options_.caller)))
                continue;
            Waits& w = lines_[std::move(line)];
            w.count += value.count;
            w.total_ns += value.total_ns;
            w.max_ns = std::max<std::uint64_t>(w.max_ns, value.max_ns);
            w.comm = std::string(text_of(value.comm));
        }
        write(options, out);
        if (const std::uint64_t uncounted = report_missed(); uncounted && options.json)
            out.print("{}\n", lost_json({.not_counted = uncounted}, now_ns(options.clock)));
        symbolizer_->report_missed("klockstat");
    }

private:
    static Skeleton<klockstat_bpf> opened(const Cli& cli, const Options& options)
    {
        auto skel = Skeleton<klockstat_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        skel->rodata->by_lock = options.by_lock;
        skel->rodata->per_thread = options.per_thread;
        if (!options.lock.empty())
            skel->rodata->target_lock = lock_address(options.lock);
        size_stack_map(skel->maps.stacks, options.per_thread ? 1 : options.stack_storage,
                       KLOCKSTAT_MAX_STACK_DEPTH);
        return skel;
    }

    // The stack's frames from the first outside the locking functions (the caller) outwards,
    // -s of them; the whole stack when every frame is a locking function.
    std::vector<std::string> caller_frames(int stack_id)
    {
        std::vector<std::string> frames = symbolizer_->kernel(stack_id);
        auto caller = std::find_if(frames.begin(), frames.end(),
                                   [](const std::string& f) { return !is_lock_function(f); });
        if (caller == frames.end())
            caller = frames.begin();
        const std::size_t left = static_cast<std::size_t>(frames.end() - caller);
        return {caller, caller + std::min<std::size_t>(left, options_.frames)};
    }

    void write(const CommonOptions& options, Output& out) const
    {
        std::vector<std::pair<const Line*, const Waits*>> sorted;
        for (const auto& [line, w] : lines_)
            sorted.emplace_back(&line, &w);
        const auto measure = [this](const Waits& w) {
            return options_.sort == Sort::count   ? w.count
                   : options_.sort == Sort::total ? w.total_ns
                                                  : w.max_ns;
        };
        // The largest first, as libbpf-tools; ties in the order of their keys.
        std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
            return measure(*a.second) > measure(*b.second);
        });
        if (sorted.size() > options_.entries)
            sorted.resize(options_.entries);
        const std::int64_t time_ns = now_ns(options.clock);
        if (options.json) {
            for (const auto& [line, w] : sorted) {
                JsonObject o;
                o.add("type", "count").add("time_ns", time_ns);
                if (options_.per_thread)
                    o.add("pid", line->pid).add("tid", line->tid).add("comm", w->comm);
                else
                    o.add("caller", line->frames.empty() ? "" : line->frames.front())
                        .add_raw("stack", json_string_array(line->frames));
                if (options_.by_lock || !options_.lock.empty())
                    o.add("lock", fmt::format("0x{:x}", line->lock));
                o.add("lock_type", lock_type(line->flags))
                    .add("flags", lock_flags(line->flags))
                    .add("count", w->count)
                    .add("total_ns", w->total_ns)
                    .add("max_ns", w->max_ns)
                    .add("avg_ns", w->total_ns / w->count);
                out.print("{}\n", o.str());
            }
            return;
        }
        const bool locks = options_.by_lock || !options_.lock.empty();
        out.print("\n{:>37} {:<11}{}  Avg Wait    Count   Max Wait   Total Wait\n",
                  options_.per_thread ? "Tid              Comm" : "Caller", "Type",
                  locks ? fmt::format(" {:>18}", "Lock") : "");
        for (const auto& [line, w] : sorted) {
            const std::string who =
                options_.per_thread ? fmt::format("{}  {:>16}", line->tid, w->comm)
                                    : (line->frames.empty() ? "" : line->frames.front());
            out.print("{:>37} {:<11}{} {:>9} {:>8} {:>10} {:>12}\n", who, lock_type(line->flags),
                      locks ? fmt::format(" {:>#18x}", line->lock) : "",
                      wait_text(w->total_ns / w->count), w->count, wait_text(w->max_ns),
                      wait_text(w->total_ns));
            if (!options_.per_thread)
                for (std::size_t i = 1; i < line->frames.size(); i++)
                    out.print("{:>37}\n", line->frames[i]);
        }
    }

    Options options_;
    SwappedMap waits_;
    std::optional<StackSymbolizer> symbolizer_;
    std::map<Line, Waits> lines_; // since the start, or the last print with -R
};

std::optional<Sort> sort_of(const std::string& text)
{
    if (text == "acq_max")
        return Sort::max;
    if (text == "acq_total")
        return Sort::total;
    if (text == "acq_count")
        return Sort::count;
    return std::nullopt;
}

} // namespace

std::string lock_flags(std::uint32_t flags)
{
    constexpr std::array<std::pair<std::uint32_t, const char*>, 6> names{
        {{KLOCKSTAT_F_SPIN, "SPIN"},
         {KLOCKSTAT_F_READ, "READ"},
         {KLOCKSTAT_F_WRITE, "WRITE"},
         {KLOCKSTAT_F_RT, "RT"},
         {KLOCKSTAT_F_PERCPU, "PERCPU"},
         {KLOCKSTAT_F_MUTEX, "MUTEX"}}};
    std::string text;
    for (const auto& [bit, name] : names)
        if (flags & bit) {
            text += text.empty() ? "" : "|";
            text += name;
            flags &= ~bit;
        }
    if (flags)
        text += fmt::format("{}0x{:x}", text.empty() ? "" : "|", flags);
    return text;
}

std::string lock_type(std::uint32_t flags)
{
    switch (flags) {
    case KLOCKSTAT_F_SPIN: return "spinlock";
    case KLOCKSTAT_F_SPIN | KLOCKSTAT_F_READ: return "rwlock:R";
    case KLOCKSTAT_F_SPIN | KLOCKSTAT_F_WRITE: return "rwlock:W";
    case KLOCKSTAT_F_READ: return "rwsem:R";
    case KLOCKSTAT_F_WRITE: return "rwsem:W";
    case KLOCKSTAT_F_RT: return "rt-mutex";
    case KLOCKSTAT_F_RT | KLOCKSTAT_F_READ: return "rwlock-rt:R";
    case KLOCKSTAT_F_RT | KLOCKSTAT_F_WRITE: return "rwlock-rt:W";
    case KLOCKSTAT_F_PERCPU | KLOCKSTAT_F_READ: return "pcpu-sem:R";
    case KLOCKSTAT_F_PERCPU | KLOCKSTAT_F_WRITE: return "pcpu-sem:W";
    case KLOCKSTAT_F_MUTEX:
    case KLOCKSTAT_F_MUTEX | KLOCKSTAT_F_SPIN: return "mutex";
    default: return lock_flags(flags);
    }
}

bool is_lock_function(std::string_view name)
{
    static constexpr std::array<std::string_view, 22> prefixes{
        "queued_",    "native_queued_", "__pv_queued_", "pv_queued_",  "_raw_",
        "do_raw_",    "__mutex_lock",   "mutex_lock",   "mutex_spin",  "mutex_optimistic",
        "rwsem_",     "__rwsem_",       "down_",        "__down_",     "percpu_down_",
        "__percpu_down_", "rt_mutex_",  "__rt_mutex_",  "rt_spin_",    "rtlock_",
        "rwbase_",    "osq_lock"};
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](std::string_view p) { return name.starts_with(p); });
}

void add_options(Cli& cli, Options& o)
{
    cli.option("-c,--caller", o.caller, "only callers whose function name starts with FUNC")
        .type_name("FUNC");
    cli.option("-L,--lock", o.lock,
               "only the lock at this address (0x...) or kernel symbol (cgroup_mutex); its "
               "address is shown")
        .type_name("LOCK");
    cli.option("-n,--locks", o.entries, "print the first NR_LOCKS lines (callers or threads)")
        .range(1u, 99999999u)
        .type_name("NR_LOCKS");
    cli.option("-s,--stacks", o.frames, "frames printed per caller, from the caller outwards (default 1)")
        .range(1u, static_cast<unsigned>(KLOCKSTAT_MAX_STACK_DEPTH))
        .type_name("NR_STACKS");
    cli.option_function("-S,--sort",
                        [&o](const std::string& v) {
                            // libbpf-tools' acq_X[,hld_Y]: hold times are not seen (checked).
                            o.sort = *sort_of(v.substr(0, v.find(',')));
                        },
                        "sort by acq_max (default), acq_total or acq_count (hold times are not "
                        "seen: no hld_*)")
        .check([](const std::string& v) {
            if (v.find("hld_") != std::string::npos)
                return std::string("hold times are not seen by the contention tracepoints");
            return sort_of(v.substr(0, v.find(','))) && v.find(',') == std::string::npos
                       ? std::string()
                       : std::string("not acq_max, acq_total or acq_count");
        }, "SORT")
        .type_name("SORT");
    cli.flag("-R,--reset", o.reset, "each interval's waits alone (default: since the start)");
    cli.flag("-P,--per-thread", o.per_thread, "by thread instead of caller");
    cli.flag("--by-lock", o.by_lock, "also by lock address");
    add_stack_storage_option(cli, o.stack_storage);
    cli.add_map_memory();
}

std::unique_ptr<tpkit::Collector> open(const Cli& cli, const Options& options)
{
    if (options.per_thread && options.frames != 1)
        throw Error(Exit::usage, "--per-thread and --stacks cannot be used together");
    require_event({"lock", "contention_begin"}, "Linux 5.19 and later have it");
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::klockstat
