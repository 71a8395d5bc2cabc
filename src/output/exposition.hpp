// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Metrics in Prometheus' exposition formats: the text format 0.0.4 and OpenMetrics 1.0, chosen
// by a scraper's Accept header.
#pragma once

#include "tpkit/output/histogram.hpp"
#include "tpkit/output/metrics.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tpkit {

enum class ExpositionFormat { prometheus, openmetrics };

// OpenMetrics when the Accept header asks for application/openmetrics-text, else the text format.
ExpositionFormat negotiate_exposition(std::string_view accept);
// The Content-Type of a format's body.
std::string_view exposition_content_type(ExpositionFormat format);

enum class MetricType { counter, gauge, histogram };

// A histogram as exposed: cumulative counts at upper bounds ("le"), the last at +Inf.
struct ExposedHistogram {
    std::vector<std::pair<double, std::uint64_t>> buckets; // (le, cumulative count), le rising
    std::uint64_t count = 0;
    std::optional<double> sum; // only where the values' sum is known
};

struct Series {
    std::vector<Label> labels;
    std::variant<double, ExposedHistogram> value;
};

// One metric family. `name` is the full name without a counter's _total ("tpkit_runqlat_seconds"):
// counters' samples get _total, histograms' _bucket, _count and _sum.
struct MetricFamily {
    std::string name;
    std::string help;
    std::string unit; // OpenMetrics' UNIT ("seconds"); the name must then end with _<unit>
    MetricType type = MetricType::gauge;
    std::vector<Series> series;
};

// Whether `name` is a valid metric or label name ([a-zA-Z_][a-zA-Z0-9_]*).
bool valid_metric_name(std::string_view name);

// A histogram's buckets as Prometheus' cumulative "le" buckets: each bucket's true upper bound
// (its highest value) times `multiplier`; a linear histogram's at-or-above-max bucket is +Inf,
// and +Inf always ends the list.
ExposedHistogram expose_histogram(const Histogram& hist, double multiplier);

// The families in `format`, with HELP, TYPE (and UNIT in OpenMetrics) lines, label values
// escaped, and OpenMetrics' closing "# EOF".
std::string render_exposition(const std::vector<MetricFamily>& families, ExpositionFormat format);

} // namespace tpkit
