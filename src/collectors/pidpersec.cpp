// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/pidpersec.hpp"

#include <tpkit/tools/pidpersec.h>
#include "pidpersec.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/run/task_filters.hpp>

#include <ctime>
#include <variant>

namespace tpkit::pidpersec {
namespace {

// The new tasks (processes and threads, each with a PID of its own) since the previous call.
class Collector : public SkeletonCollector<pidpersec_bpf> {
public:
    explicit Collector(const Cli& cli)
        : SkeletonCollector(opened(cli)), counts_(skel_->maps.counts)
    {
        // Nothing can go uncounted: no key to find room for, no map to fill.
        skel_.load();
        skel_.attach();
    }

    Reading collect(Drain) override
    {
        // The array's one entry: the struct's two counters in order, summed over CPUs.
        const auto growth = counts_.increase();
        const std::uint64_t processes = growth.at(0).at(0), threads = growth.at(0).at(1);
        Reading reading;
        reading.counter_columns = {{"COUNT", "count", 1, 0, ""},
                                   {"PROCESSES", "processes", 1, 0, ""},
                                   {"THREADS", "threads", 1, 0, ""}};
        const std::vector<Label> labels{{"event", "task:task_newtask"}};
        reading.metrics.push_back({"count", "new tasks", "", labels, processes + threads});
        reading.metrics.push_back({"processes", "new processes", "", labels, processes});
        reading.metrics.push_back({"threads", "new threads", "", labels, threads});
        return reading;
    }

    // bcc's line in text: the time, and every new task of the interval.
    void print(Drain drain, const CommonOptions& options, Output& out) override
    {
        if (options.json) {
            MetricCollector::print(drain, options, out);
            return;
        }
        const Reading reading = collect(drain);
        out.print("{}: PIDs/sec: {}\n", format_hms(std::time(nullptr)),
                  std::get<std::uint64_t>(reading.metrics.at(0).value));
    }

private:
    static Skeleton<pidpersec_bpf> opened(const Cli& cli)
    {
        auto skel = Skeleton<pidpersec_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        return skel;
    }

    ArrayGrowth counts_;
};

} // namespace

void add_options(Cli&, Options&) {}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options&)
{
    return std::make_unique<Collector>(cli);
}

} // namespace tpkit::pidpersec
