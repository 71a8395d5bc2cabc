// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What serves each configured metric: a generic engine (count, hist) or a tool's collector,
// loaded and attached, with its running totals.
#pragma once

#include "config.hpp"

#include "output/exposition.hpp"
#include <tpkit/run/collector.hpp>

#include <memory>
#include <vector>

namespace tpkit::exporter {

// Checks the configuration against this machine by the code that starts it, stopped before
// anything is loaded (StopBeforeLoad): the first error a start would give, or none.
void check_config(const Config& config);

// The tools whose collectors the exporter serves, by name.
std::vector<std::string> exported_tools();

class Source {
public:
    // Checks, loads and attaches: Error naming the file (and where it can, the line and key).
    explicit Source(MetricConfig config);

    const MetricConfig& config() const { return config_; }
    // Drains the collector into the running totals; then the families, in Prometheus' units.
    void scrape(std::vector<MetricFamily>& out);
    std::uint64_t uncounted() const { return collector_->uncounted(); }
    std::uint64_t over_series_limit() const { return over_series_limit_; }
    const MetricCollector& collector() const { return *collector_; }

private:
    MetricConfig config_;
    std::unique_ptr<MetricCollector> collector_;
    CumulativeMetrics totals_;
    std::uint64_t over_series_limit_ = 0;
};

} // namespace tpkit::exporter
