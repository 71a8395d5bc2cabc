// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/run/collector.hpp"

#include "tpkit/process/clock.hpp"
#include "tpkit/run/tool.hpp"

#include <chrono>
#include <ctime>
#include <utility>

namespace tpkit {

void MetricCollector::print(Drain drain, const CommonOptions& options, Output& out)
{
    const std::int64_t end_ns = now_ns(options.clock); // the interval's end: when drained
    Reading reading = collect(drain);
    const std::uint64_t now = uncounted();
    reading.uncounted = now - std::exchange(uncounted_printed_, now);
    if (options.json)
        render_json(reading, out, end_ns);
    else
        render_text(reading, out);
}

namespace {

// run_collector()'s loop, until its last print.
void print_intervals(const CommonOptions& options, StopSignal& stop, Collector& collector)
{
    Output& out = standard_output();
    SkippedRuns skipped(options.tool);
    auto print_once = [&](Drain drain) {
        if (options.timestamp && !options.json)
            out.print("{}\n", format_hms(std::time(nullptr)));
        collector.print(drain, options, out);
        if (const std::uint64_t n = skipped.report(); n && options.json)
            out.print("{}\n", lost_json({.recursion = n}, now_ns(options.clock)));
        out.write_available();
    };
    if (options.interval <= 0) {
        while (!stop.wait(std::chrono::hours(1))) {
        }
        print_once(Drain::last);
        return;
    }
    const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::duration<double>(options.interval));
    for (std::uint64_t printed = 0; options.count == 0 || printed < options.count; printed++) {
        auto next = std::chrono::steady_clock::now() + interval;
        bool stopping = false;
        while (!stopping) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(next - std::chrono::steady_clock::now());
            if (left <= std::chrono::milliseconds(0))
                break;
            stopping = stop.wait(left);
        }
        const bool last = stopping || printed + 1 == options.count;
        print_once(last ? Drain::last : Drain::interval);
        if (stopping)
            return;
    }
}

} // namespace

void run_collector(const CommonOptions& options, Collector& collector)
{
    StopSignal stop(options);
    print_intervals(options, stop, collector);
    standard_output().end();
}

} // namespace tpkit
