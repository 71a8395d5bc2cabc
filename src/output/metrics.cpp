// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/output/metrics.hpp"

#include "tpkit/support/json.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

namespace tpkit {
namespace {

// What render_bars() and render_json() know of a histogram: its event, field and unit, and
// the key labels that split it, if any: the first names the key, and the values of all make
// it, as bcc's tools print them ("pid = 181 bash").
HistogramLabel histogram_label(const Metric& m)
{
    HistogramLabel label{"", m.name, m.unit, "", ""};
    for (const Label& l : m.labels) {
        if (l.name == "event") {
            label.event = l.value;
        } else if (label.key_name.empty()) {
            label.key_name = l.name;
            label.key = l.value;
        } else {
            label.key += ' ' + l.value;
        }
    }
    return label;
}

std::string upper(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// Counters with the same labels: one row of the counter table.
struct CounterRow {
    std::vector<Label> labels;
    std::map<std::string, std::uint64_t> values; // by metric name
};

std::vector<CounterRow> counter_rows(const Reading& reading)
{
    std::vector<CounterRow> rows;
    std::map<std::string, std::size_t> index; // labels → rows position
    for (const Metric& m : reading.metrics) {
        const auto* value = std::get_if<std::uint64_t>(&m.value);
        if (!value)
            continue;
        std::string id;
        for (const Label& l : m.labels)
            id += l.name + '=' + l.value + '\0';
        auto [it, inserted] = index.try_emplace(id, rows.size());
        if (inserted)
            rows.push_back({m.labels, {}});
        rows[it->second].values[m.name] += *value;
    }
    return rows;
}

std::vector<CounterColumn> value_columns(const Reading& reading)
{
    if (reading.counter_columns.empty())
        return {{"COUNT", "count", 1, 0, ""}};
    return reading.counter_columns;
}

std::string label_value(const CounterRow& row, std::string_view name)
{
    for (const Label& l : row.labels)
        if (l.name == name)
            return l.value;
    return {};
}

// value / (divisor × per) with `decimals` decimals, rounded, in integers: exact where the
// division is (nanoseconds as microseconds with 3 decimals).
std::string fixed_point(std::uint64_t value, std::uint64_t divisor, std::uint64_t per, int decimals)
{
    unsigned __int128 scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    const unsigned __int128 denominator =
        static_cast<unsigned __int128>(divisor ? divisor : 1) * (per ? per : 1);
    const unsigned __int128 scaled = (value * scale + denominator / 2) / denominator;
    const auto whole = static_cast<std::uint64_t>(scaled / scale);
    if (decimals == 0)
        return std::to_string(whole);
    return fmt::format("{}.{:0{}}", whole, static_cast<std::uint64_t>(scaled % scale), decimals);
}

std::string value_cell(const CounterRow& row, const CounterColumn& column)
{
    auto get = [&](const std::string& name) {
        auto it = row.values.find(name);
        return it == row.values.end() ? std::uint64_t(0) : it->second;
    };
    const std::uint64_t per = column.per.empty() ? 1 : get(column.per);
    const std::uint64_t value = get(column.metric) * (column.percent ? 100 : 1);
    return per ? fixed_point(value, column.divisor, per, column.decimals) : "0";
}

// "TIME (us)" → "time_us": text headings as JSON keys.
std::string snake_case(std::string_view heading)
{
    std::string key;
    for (char c : heading) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        else if (!key.empty() && key.back() != '_')
            key += '_';
    }
    while (!key.empty() && key.back() == '_')
        key.pop_back();
    return key;
}

// Where a label goes in a folded line, whatever order the key gave its parts: flamegraph.pl
// draws the first frame as the root, so the event (when there are several), the process (comm,
// then pid and tid), the other parts, then the user stack, then the kernel stack at the leaf.
int folded_place(const Label& l)
{
    if (l.name == "event")
        return 0;
    if (l.name == "comm")
        return 1;
    if (l.name == "pid" || l.name == "tid")
        return 2;
    if (!l.stack)
        return 3;
    return l.name == "kstack" ? 5 : 4;
}

void render_folded(const Reading& reading, Output& out)
{
    const auto columns = value_columns(reading);
    auto rows = counter_rows(reading);
    // One event's name would only repeat on every line.
    std::set<std::string> events;
    for (const CounterRow& r : rows)
        events.insert(label_value(r, "event"));
    for (CounterRow& r : rows) {
        std::stable_sort(r.labels.begin(), r.labels.end(), [](const Label& a, const Label& b) {
            return folded_place(a) < folded_place(b);
        });
        std::string line;
        for (const Label& l : r.labels)
            if (!l.value.empty() && (l.name != "event" || events.size() > 1))
                line += (line.empty() ? "" : ";") + l.value;
        out.print("{} {}\n", line.empty() ? "[unknown]" : line, value_cell(r, columns.at(0)));
    }
}

// A label as a member named by what it is ("pid":181, "comm":"bash"), a number unquoted, a stack
// as an array of its frames, root first; a label whose name the line's own members take (a tracepoint field named "total") as "key_NAME".
void add_label(JsonObject& obj, const Label& l, const std::vector<std::string>& taken)
{
    const bool clash = l.name != "event" &&
                       std::find(taken.begin(), taken.end(), l.name) != taken.end();
    const std::string name = clash ? "key_" + l.name : l.name;
    if (l.stack) {
        obj.add_raw(name, json_string_array(l.frames));
        return;
    }
    const bool number = l.number && !l.value.empty() &&
                        l.value.find_first_not_of("-0123456789", l.value[0] == '-') == std::string::npos;
    if (number)
        obj.add_raw(name, l.value);
    else
        obj.add(name, l.value);
}

void render_counter_table(const Reading& reading, Output& out)
{
    const auto& labels = reading.counter_labels;
    const auto columns = value_columns(reading);
    const auto rows = counter_rows(reading);
    std::size_t first_width = 5;
    if (!labels.empty()) {
        first_width = std::max(first_width, labels[0].size());
        for (const CounterRow& r : rows)
            first_width = std::max(first_width, label_value(r, labels[0]).size());
    }
    auto line = [&](auto&& label_cell, auto&& value_cell_of) {
        std::string text;
        for (std::size_t i = 0; i < labels.size(); i++)
            text += i == 0 ? fmt::format("{:<{}}", label_cell(i), first_width)
                           : fmt::format(" {:<16}", label_cell(i));
        for (std::size_t i = 0; i < columns.size(); i++)
            text += fmt::format(" {:>{}}", value_cell_of(i),
                                std::max<std::size_t>(12, columns[i].heading.size()));
        out.print("{}\n", text);
    };
    line([&](std::size_t i) { return upper(labels[i]); },
         [&](std::size_t i) { return columns[i].heading; });
    for (const CounterRow& r : rows)
        line([&](std::size_t i) { return label_value(r, labels[i]); },
             [&](std::size_t i) { return value_cell(r, columns[i]); });
    out.append("\n");
}

} // namespace

Label stack_label(std::string name, const std::vector<std::string>& innermost_first)
{
    Label label{std::move(name), "", false, true, {innermost_first.rbegin(), innermost_first.rend()}};
    for (const auto& frame : label.frames)
        label.value += (label.value.empty() ? "" : ";") + frame;
    return label;
}

bool labels_less(const std::vector<Label>& a, const std::vector<Label>& b)
{
    for (std::size_t i = 0; i < a.size() && i < b.size(); i++) {
        const Label &x = a[i], &y = b[i];
        if (x.value == y.value)
            continue;
        if (x.number && y.number) {
            // Decimal, perhaps signed: by sign, then by length, then digit by digit.
            bool x_negative = x.value.starts_with('-'), y_negative = y.value.starts_with('-');
            if (x_negative != y_negative)
                return x_negative;
            auto x_digits = std::string_view(x.value).substr(x_negative);
            auto y_digits = std::string_view(y.value).substr(y_negative);
            bool less = x_digits.size() != y_digits.size() ? x_digits.size() < y_digits.size()
                                                           : x_digits < y_digits;
            return x_negative ? !less : less;
        }
        return x.value < y.value;
    }
    return a.size() < b.size();
}

void render_text(const Reading& reading, Output& out)
{
    if (reading.folded)
        render_folded(reading, out);
    else if (!reading.counter_labels.empty() || !reading.counter_columns.empty())
        render_counter_table(reading, out);
    for (const Metric& m : reading.metrics)
        if (const auto* hist = std::get_if<Histogram>(&m.value))
            out.print("{}\n", render_bars(*hist, histogram_label(m)));
}

void render_json(const Reading& reading, Output& out, std::int64_t time_ns)
{
    const auto columns = value_columns(reading);
    for (const CounterRow& r : counter_rows(reading)) {
        JsonObject obj;
        obj.add("type", "count").add("time_ns", time_ns);
        std::vector<std::string> taken{"type", "time_ns"};
        for (const CounterColumn& c : columns)
            taken.push_back(snake_case(c.heading));
        for (const Label& l : r.labels)
            add_label(obj, l, taken);
        for (const CounterColumn& c : columns)
            obj.add_raw(snake_case(c.heading), value_cell(r, c));
        out.print("{}\n", obj.str());
    }
    for (const Metric& m : reading.metrics) {
        const auto* hist = std::get_if<Histogram>(&m.value);
        if (!hist)
            continue;
        const HistogramLabel label = histogram_label(m);
        JsonObject obj;
        obj.add("type", "hist").add("time_ns", time_ns);
        obj.add("event", label.event).add("field", label.field).add("unit", label.unit);
        const std::vector<std::string> taken{"type", "time_ns", "event", "field", "unit", "key",
                                             "buckets", "total", "p50", "p90", "p99"};
        for (const Label& l : m.labels)
            if (l.name != "event")
                add_label(obj, l, taken);
        if (!label.key.empty())
            obj.add("key", label.key);
        add_histogram_json(obj, *hist);
        out.print("{}\n", obj.str());
    }
    if (reading.uncounted)
        out.print("{}\n", lost_json({.not_counted = reading.uncounted}, time_ns));
}

std::string lost_json(const LostEvents& lost, std::optional<std::int64_t> time_ns)
{
    JsonObject obj;
    obj.add("type", "lost");
    if (time_ns)
        obj.add("time_ns", *time_ns);
    obj.add("lost_events", lost.total());
    for (const auto& [cause, n] : {std::pair{"buffer_full", lost.buffer_full},
                                   std::pair{"not_counted", lost.not_counted},
                                   std::pair{"recursion", lost.recursion}})
        if (n)
            obj.add(cause, n);
    return obj.str();
}

std::uint64_t CumulativeMetrics::add(const Reading& delta, std::size_t max_series)
{
    std::uint64_t left_out = 0;
    for (const Metric& m : delta.metrics) {
        std::string id = m.name;
        for (const Label& l : m.labels)
            id += '\0' + l.name + '=' + l.value;
        auto it = index_.find(id);
        if (it == index_.end() && totals_.size() >= max_series) {
            const auto* count = std::get_if<std::uint64_t>(&m.value);
            left_out += count ? *count : std::get<Histogram>(m.value).total();
            continue;
        }
        bool inserted = false;
        if (it == index_.end())
            std::tie(it, inserted) = index_.try_emplace(id, totals_.size());
        if (inserted) {
            totals_.push_back(m);
            continue;
        }
        Metric& total = totals_[it->second];
        if (auto* count = std::get_if<std::uint64_t>(&total.value))
            *count += std::get<std::uint64_t>(m.value);
        else
            std::get<Histogram>(total.value).add(std::get<Histogram>(m.value));
    }
    return left_out;
}

} // namespace tpkit
