// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/futexctn.hpp"

#include "futexctn.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/run/stack_symbolizer.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/support/error.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tpkit::futexctn {
namespace {

constexpr std::size_t value_words = sizeof(futexctn_value) / sizeof(std::uint64_t);
static_assert(sizeof(futexctn_value) % sizeof(std::uint64_t) == 0);

// The histograms since the previous call, one per futex word, thread (process with -s) and stack.
class Collector : public SkeletonCollector<futexctn_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options),
          hists_(skel_->maps.hists, skel_->maps.hists_a, skel_->maps.hists_b)
    {
        hists_.set_max_entries(max_keys);
        load_and_attach(fmt::format("no memory for a thread's wait, or more than {} futex words, "
                                    "threads and stacks in an interval",
                                    max_keys));
        if (!options.summary)
            symbolizer_.emplace(bpf_map__fd(skel_->maps.stacks), options.stack_depth,
                                FUTEXCTN_NO_STACK, false);
    }

    Reading collect(Drain drain) override
    {
        auto entries = hists_.drain(drain);
        report_missed();
        const std::string unit = options_.milliseconds ? "msecs" : "usecs";
        Reading reading;
        for (const auto& entry : entries) {
            if (entry.counters.size() != value_words)
                throw Error(Exit::failure, "futexctn: a histogram value of an unexpected size");
            futexctn_value value; // for its comm; the counters are read as std::uint64_t
            std::memcpy(&value, entry.counters.data(), sizeof(value));
            const auto key = entry.key_as<futexctn_key>();
            std::vector<Label> labels{{"event", "syscalls:sys_exit_futex"},
                                      {"lock", fmt::format("0x{:x}", key.uaddr)},
                                      {"pid", std::to_string(key.pid), true}};
            if (!options_.summary)
                labels.push_back({"tid", std::to_string(key.tid), true});
            labels.push_back({"comm", std::string(value.comm, strnlen(value.comm, sizeof(value.comm)))});
            if (symbolizer_)
                labels.push_back(stack_label(
                    "ustack", symbolizer_->user(key.user_stack_id, static_cast<pid_t>(key.pid))));
            reading.metrics.push_back(
                {unit, "time waiting on a contended futex", unit, std::move(labels),
                 Histogram::from_log2(
                     std::span<const std::uint64_t>(entry.counters).first(TPKIT_LOG2_SLOTS))});
        }
        std::sort(reading.metrics.begin(), reading.metrics.end(),
                  [](const Metric& a, const Metric& b) { return labels_less(a.labels, b.labels); });
        if (symbolizer_) {
            symbolizer_->forget_processes();
            symbolizer_->report_missed("futexctn");
        }
        return reading;
    }

private:
    static Skeleton<futexctn_bpf> opened(const Cli& cli, const Options& options)
    {
        auto skel = Skeleton<futexctn_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        skel->rodata->milliseconds = options.milliseconds;
        skel->rodata->summary = options.summary;
        skel->rodata->target_lock = options.lock;
        size_stack_map(skel->maps.stacks, options.summary ? 1 : options.stack_storage,
                       options.stack_depth);
        return skel;
    }

    Options options_;
    SwappedMap hists_;
    std::optional<StackSymbolizer> symbolizer_; // without -s
};

// -l's value: a futex word's address in hexadecimal, with or without 0x, as libbpf-tools takes
// it; nullopt for anything else (0 too, which would mean every word).
std::optional<std::uint64_t> lock_address(const std::string& text)
{
    const std::string digits =
        text.starts_with("0x") || text.starts_with("0X") ? text.substr(2) : text;
    if (digits.empty() || digits.size() > 16 ||
        digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        return std::nullopt;
    const std::uint64_t address = std::stoull(digits, nullptr, 16);
    return address ? std::optional(address) : std::nullopt;
}

} // namespace

void add_options(Cli& cli, Options& o)
{
    cli.flag("-m,--milliseconds", o.milliseconds, "histograms in milliseconds");
    cli.flag("-s,--summary", o.summary, "by process, without stacks (default: by thread and user stack)");
    cli.option_function("-l,--lock", [&o](const std::string& v) { o.lock = *lock_address(v); },
                        "only the futex word at this address (hexadecimal)")
        .check([](const std::string& v) {
            return lock_address(v) ? std::string() : std::string("not an address in hexadecimal");
        }, "HEX")
        .type_name("ADDR");
    add_stack_storage_option(cli, o.stack_storage);
    add_stack_depth_option(cli, o.stack_depth, FUTEXCTN_MAX_STACK_DEPTH, "each user stack");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::futexctn
