// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What runqlat and cpudist share: a time of each task (its run-queue waits, its stays on or off
// the CPU) in log2 histograms filled in the kernel, one or one per process, thread or PID
// namespace (bcc's -P, -L, --pidnss), in microseconds or (-m) milliseconds, drained each interval.
// Their BPF programs fill them with bpf/include/tpkit/task_hists.bpf.h.
#pragma once

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/limits.h>
#include <tpkit/run/task_filters.hpp>
#include <tpkit/task.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

namespace tpkit::task_hists {

enum class Split : std::uint32_t {
    none = TPKIT_SPLIT_NONE,
    process = TPKIT_SPLIT_PROCESS,
    thread = TPKIT_SPLIT_THREAD,
    pid_namespace = TPKIT_SPLIT_PID_NAMESPACE,
};

struct Options {
    bool milliseconds = false;
    bool per_process = false;
    bool per_thread = false;
    bool per_pidns = false;

    Split split() const
    {
        return per_process ? Split::process
               : per_thread ? Split::thread
               : per_pidns  ? Split::pid_namespace
                            : Split::none;
    }
};

// Keys each half of the split histograms' map holds, as many as bcc's tools allow.
constexpr std::uint32_t max_keys = 10240;

// -m, -P, -L, and --pidnss when the tool splits by PID namespace.
inline void add_options(Cli& cli, Options& options, bool with_pidns)
{
    cli.flag("-m,--milliseconds", options.milliseconds, "histograms in milliseconds");
    auto pids = cli.flag("-P,--pids", options.per_process, "one histogram per process");
    auto tids = cli.flag("-L,--tids", options.per_thread, "one histogram per thread");
    pids.excludes(tids);
    if (with_pidns)
        cli.flag("--pidnss", options.per_pidns, "one histogram per PID namespace")
            .excludes(pids)
            .excludes(tids);
}

// The collector of runqlat and cpudist: opens Skel, applies the task filters, `configure` (the
// tool's own rodata and map sizes), sizes the histogram maps for the split, loads and attaches.
// what: the metric's help; starts_full: what a full map of start times means, for the "not
// counted" line. Each collect gives the histograms since the previous one: one per key with a
// split, else one (also when empty, so that JSON readers get a total of 0), by key.
template <class Skel>
class Collector : public SkeletonCollector<Skel> {
public:
    Collector(const Cli& cli, const Options& options, std::string what,
              const std::string& starts_full, const std::function<void(Skel&)>& configure)
        : SkeletonCollector<Skel>(opened(cli, options, configure)), options_(options),
          what_(std::move(what)), single_(this->skel_->maps.task_hist),
          keyed_(this->skel_->maps.task_hists, this->skel_->maps.task_hists_a,
                 this->skel_->maps.task_hists_b)
    {
        static constexpr const char* split_names[] = {"", "processes", "threads", "PID namespaces"};
        const Split split = options.split();
        keyed_.set_max_entries(split == Split::none ? 1 : max_keys);
        std::string reason = starts_full;
        if (split != Split::none)
            reason += fmt::format(", or more than {} {} in an interval", max_keys,
                                  split_names[static_cast<int>(split)]);
        this->load_and_attach(reason);
    }

    Reading collect(Drain drain) override
    {
        std::vector<std::pair<tpkit_task_key, Histogram>> keyed;
        if (options_.split() == Split::none) {
            keyed.emplace_back(tpkit_task_key{}, Histogram::from_log2(single_.increase().at(0)));
        } else {
            for (const auto& entry : keyed_.drain(drain)) {
                const auto key = entry.key_as<tpkit_task_key>();
                keyed.emplace_back(key, Histogram::from_log2(entry.counters));
            }
        }
        this->report_missed();
        std::sort(keyed.begin(), keyed.end(),
                  [](const auto& a, const auto& b) { return a.first.id < b.first.id; });
        return reading(keyed);
    }

private:
    static Skeleton<Skel> opened(const Cli& cli, const Options& options,
                                 const std::function<void(Skel&)>& configure)
    {
        auto skel = Skeleton<Skel>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        skel->rodata->tpkit_hist_split = static_cast<std::uint32_t>(options.split());
        skel->rodata->tpkit_hist_milliseconds = options.milliseconds;
        configure(*skel);
        return skel;
    }

    Reading reading(std::vector<std::pair<tpkit_task_key, Histogram>>& keyed) const
    {
        static constexpr const char* key_names[] = {"", "pid", "tid", "pidns"};
        const Split split = options_.split();
        const std::string unit = options_.milliseconds ? "msecs" : "usecs";
        Reading reading;
        for (auto& [key, hist] : keyed) {
            // The measured value's heading is its unit, as in bcc's tools.
            std::vector<Label> labels{{"event", "sched:sched_switch"}};
            if (split != Split::none) {
                labels.push_back({key_names[static_cast<int>(split)], std::to_string(key.id), true});
                if (key.comm[0])
                    labels.push_back({"comm", std::string(text_of(key.comm))});
            }
            reading.metrics.push_back({unit, what_, unit, std::move(labels), std::move(hist)});
        }
        return reading;
    }

    Options options_;
    std::string what_;
    ArrayGrowth single_;
    SwappedMap keyed_;
};

} // namespace tpkit::task_hists
