// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What aggregating tools measure, as data: a tool's collect() returns metrics (counters and
// histograms with their labels), and a sink renders them — text (bcc's bars and count tables),
// JSON lines — or, for an exporter, any other format, with no change to the tool.
#pragma once

#include "tpkit/histogram.hpp"
#include "tpkit/output.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace tpkit {

struct Label {
    std::string name;  // "event", "pid", "comm", "dev"
    std::string value;
    bool number = false; // a decimal number: JSON writes it unquoted
};

struct Metric {
    std::string name; // what is measured or counted: a field ("len"), or "count"
    std::string help;
    std::string unit; // "bytes", "usecs"; may be empty
    std::vector<Label> labels; // "event" first, then the keys
    std::variant<std::uint64_t, Histogram> value;
};

// One collect(): the change since the previous one. Tools drain their maps, so readings are
// deltas; CumulativeMetrics adds them up where running totals are wanted (an exporter).
struct Reading {
    // Counters print as one table whose columns are these labels (then COUNT), also when no
    // counter has anything to show.
    std::vector<std::string> counter_labels;
    std::vector<Metric> metrics;
};

// bcc's layouts: each histogram as bars with percentiles, the counters as one table (label
// columns upper-cased, the first as wide as its longest value, then COUNT) and a blank line.
void render_text(const Reading& reading, Output& out);
// One JSON object per line: histograms in render_json()'s schema, counters as
// {"<label>":<value>,…,"count":N}.
void render_json(const Reading& reading, Output& out);

// Running totals of delta readings, by metric name and labels.
class CumulativeMetrics {
public:
    void add(const Reading& delta);
    const std::vector<Metric>& totals() const { return totals_; }

private:
    std::map<std::string, std::size_t> index_; // name + labels → totals_ position
    std::vector<Metric> totals_;
};

} // namespace tpkit
