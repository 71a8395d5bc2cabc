// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The exporter's state: the running sources of the current configuration, read at each scrape,
// and its own metrics.
#pragma once

#include "sources.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace tpkit::exporter {

class Exporter {
public:
    // Loads the configuration's metrics; an unchanged metric keeps its running source (no
    // detach, no counter reset). All or nothing: on any error the running set stays as it was.
    void apply(const Config& config);
    // Says that a reload failed (the running configuration stays), for the self metrics.
    void reload_failed();

    // Every metric as of now, in `format`.
    std::string scrape(ExpositionFormat format);

private:
    std::vector<MetricFamily> self_metrics(double scrape_seconds) const;

    std::mutex mutex_;
    std::vector<std::unique_ptr<Source>> sources_;
    std::uint64_t scrapes_[2] = {}; // by ExpositionFormat
    bool last_reload_ok_ = true;
    double last_reload_time_ = 0;
};

} // namespace tpkit::exporter
