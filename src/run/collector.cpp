// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/run/collector.hpp"
#include "tpkit/run/tool.hpp"

#include <utility>

namespace tpkit {

void run_collector(const CommonOptions& options, Collector& collector)
{
    StopSignal stop(options);
    std::uint64_t uncounted = collector.uncounted();
    run_aggregate(options, stop, [&](Drain drain) {
        Reading reading = collector.collect(drain);
        const std::uint64_t now = collector.uncounted();
        reading.uncounted = now - std::exchange(uncounted, now);
        return reading;
    });
}

} // namespace tpkit
