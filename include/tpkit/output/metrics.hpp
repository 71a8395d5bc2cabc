// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What aggregating tools measure, as data: a tool's collect() returns metrics (counters and
// histograms with their labels), and a sink renders them — text (bcc's bars and count tables),
// JSON lines — or, for an exporter, any other format, with no change to the tool.
#pragma once

#include "tpkit/output/histogram.hpp"
#include "tpkit/output/output.hpp"

#include <cstdint>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tpkit {

struct Label {
    std::string name;  // "event", "pid", "comm", "dev"
    std::string value;
    bool number = false; // a decimal number: JSON writes it unquoted, text sorts it as a number
    // A stack (--by kstack): its frames, root first, which value holds joined by ';'; JSON
    // writes them as an array.
    bool stack = false;
    std::vector<std::string> frames = {};
};

// A stack's label NAME: its frames root first (stack walks give them innermost first), and
// those joined by ';' as its value, as folded stacks write them.
Label stack_label(std::string name, const std::vector<std::string>& innermost_first);

// Orders label lists value by value: numbers as numbers (9 before 10), the rest as text.
bool labels_less(const std::vector<Label>& a, const std::vector<Label>& b);

struct Metric {
    std::string name; // what is measured or counted: a field ("len"), or "count"
    std::string help;
    std::string unit; // "bytes", "usecs"; may be empty
    std::vector<Label> labels; // "event" first, then the keys
    std::variant<std::uint64_t, Histogram> value;
};

// A value column of the counter table when rows carry several counters (a count and a total
// time): the counter named `metric` of each row, shown as value / divisor with `decimals`
// decimals, and with `per` set divided by that counter of the row too (an average). In JSON its
// key is the heading in snake_case ("TIME (us)" → "time_us", "%RND" → "rnd").
struct CounterColumn {
    std::string heading;
    std::string metric;
    std::uint64_t divisor = 1;
    int decimals = 0;
    std::string per;
    bool percent = false; // times 100: with `per`, a share in percent (bcc's %RND)
};

// Events missing from a run's or an interval's output, by cause (docs/json.md, `lost`).
struct LostEvents {
    std::uint64_t buffer_full = 0; // records the ring or perf buffer could not take
    std::uint64_t not_counted = 0; // a full map, a start with no room, a value no bucket holds
    std::uint64_t recursion = 0;   // runs of the tool's programs the kernel skipped (program_stats.hpp)
    std::uint64_t total() const { return buffer_full + not_counted + recursion; }
};

// {"type":"lost"[,"time_ns":T],"lost_events":TOTAL} and then each cause that is not 0 by its
// name ("buffer_full":N, …).
std::string lost_json(const LostEvents& lost, std::optional<std::int64_t> time_ns = std::nullopt);

// One collect(): the change since the previous one. Tools drain their maps, so readings are
// deltas; CumulativeMetrics adds them up where running totals are wanted (an exporter).
struct Reading {
    // Counters print as one table, also when no counter has anything to show: one row per set
    // of labels, whose columns are these labels, then counter_columns (by default COUNT, the
    // counter named "count").
    std::vector<std::string> counter_labels;
    std::vector<CounterColumn> counter_columns;
    std::vector<Metric> metrics;
    // Counters print folded, as flamegraph.pl reads them, instead of as a table: one line per
    // row, its label values joined by ';' (a stack's frames each), a space and its count. The
    // root first, whatever the labels' order: the event (when several), comm, pid and tid, the
    // other labels, the user stack ("ustack"), the kernel stack ("kstack").
    bool folded = false;
    // Events not counted in this interval (a full map): with --json a {"type":"lost"} line.
    std::uint64_t uncounted = 0;
};

// bcc's layouts: each histogram as bars with percentiles, the counters as one table (label
// columns upper-cased, the first as wide as its longest value, then COUNT) and a blank line.
void render_text(const Reading& reading, Output& out);
// One JSON object per line (docs/json.md), each with "type" and the interval's end as
// "time_ns": counters one object per row of the table,
// {"type":"count","time_ns":T,"<label>":<value>,…,"count":N,…}; histograms
// {"type":"hist","time_ns":T,"event":…,"field":…,"unit":…,"<label>":<value>,…,"key":…,
// "buckets":…} ("key": the labels' values joined by spaces, as text shows them).
void render_json(const Reading& reading, Output& out, std::int64_t time_ns);

// Running totals of delta readings, by metric name and labels.
class CumulativeMetrics {
public:
    // Adds a delta. New series beyond max_series are not kept: the events they carry (counter
    // values, histogram totals) are returned, for a count of what was left out.
    std::uint64_t add(const Reading& delta, std::size_t max_series = SIZE_MAX);
    const std::vector<Metric>& totals() const { return totals_; }

private:
    std::map<std::string, std::size_t> index_; // name + labels → totals_ position
    std::vector<Metric> totals_;
};

} // namespace tpkit
