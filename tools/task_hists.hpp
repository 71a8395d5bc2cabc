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
#include <tpkit/run/stream.hpp>
#include <tpkit/task.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
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

// The histograms since the previous call: one per key with a split, else one (also when empty,
// so that JSON readers get a total of 0), by key. what: the metric's help.
class Histograms {
public:
    // Before load: sizes the maps for the split.
    template <class Skel>
    Histograms(Skel& skel, Split split)
        : split_(split), single_(skel.maps.task_hist),
          keyed_(skel.maps.task_hists, skel.maps.task_hists_a, skel.maps.task_hists_b)
    {
        keyed_.set_max_entries(split == Split::none ? 1 : max_keys);
    }

    Reading collect(const Options& options, const std::string& what, MissedWatch& missed, Drain drain)
    {
        std::vector<std::pair<tpkit_task_key, Histogram>> keyed;
        if (split_ == Split::none) {
            keyed.emplace_back(tpkit_task_key{}, Histogram::from_log2(single_.increase().at(0)));
        } else {
            for (const auto& entry : keyed_.drain(drain)) {
                const auto key = entry.key_as<tpkit_task_key>();
                keyed.emplace_back(key, Histogram::from_log2(entry.counters));
            }
        }
        missed.report();
        std::sort(keyed.begin(), keyed.end(),
                  [](const auto& a, const auto& b) { return a.first.id < b.first.id; });
        return reading(options, what, keyed);
    }

private:
    Reading reading(const Options& options, const std::string& what,
                    std::vector<std::pair<tpkit_task_key, Histogram>>& keyed) const
    {
        static constexpr const char* key_names[] = {"", "pid", "tid", "pidns"};
        const std::string unit = options.milliseconds ? "msecs" : "usecs";
        Reading reading;
        for (auto& [key, hist] : keyed) {
            // The measured value's heading is its unit, as in bcc's tools.
            std::vector<Label> labels{{"event", "sched:sched_switch"}};
            if (split_ != Split::none) {
                labels.push_back({key_names[static_cast<int>(split_)], std::to_string(key.id), true});
                if (key.comm[0])
                    labels.push_back({"comm", std::string(text_of(key.comm))});
            }
            reading.metrics.push_back({unit, what, unit, std::move(labels), std::move(hist)});
        }
        return reading;
    }

    Split split_;
    ArrayGrowth single_;
    SwappedMap keyed_;
};

// Opens Skel, applies the task filters, `configure` (the tool's own rodata and map sizes), sizes
// the histogram maps for the split, loads and attaches. starts_full: what a full map of start
// times means, for the "not counted" line.
template <class Skel>
std::unique_ptr<Collector> open(const Cli& cli, const Options& options, const std::string& what,
                                const std::string& starts_full,
                                const std::function<void(Skel&)>& configure)
{
    struct State {
        Skeleton<Skel> skel;
        Histograms hists;
        std::optional<MissedWatch> missed;
    };
    auto skel = Skeleton<Skel>::open(cli.name());
    apply_task_filters(*skel, cli.options());
    skel->rodata->tpkit_hist_split = static_cast<std::uint32_t>(options.split());
    skel->rodata->tpkit_hist_milliseconds = options.milliseconds;
    configure(*skel);
    Histograms hists(*skel, options.split());
    auto state = std::make_shared<State>(State{std::move(skel), std::move(hists), {}});
    state->skel.load();
    state->skel.attach();

    static constexpr const char* split_names[] = {"", "processes", "threads", "PID namespaces"};
    std::string reason = starts_full;
    if (options.split() != Split::none)
        reason += fmt::format(", or more than {} {} in an interval", max_keys,
                              split_names[static_cast<int>(options.split())]);
    state->missed.emplace(cli.name(), state->skel->maps.tpkit_missed, reason);
    State& s = *state;
    return std::make_unique<CollectorOf>(
        state, std::vector<bpf_object*>{s.skel->obj},
        [&s, options, what](Drain drain) { return s.hists.collect(options, what, *s.missed, drain); },
        [&s] { return s.missed->total(); });
}

} // namespace tpkit::task_hists
