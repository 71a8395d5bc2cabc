// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/metrics.hpp"

#include "tpkit/json.hpp"

#include <algorithm>
#include <cctype>

namespace tpkit {
namespace {

const Label* find_label(const Metric& m, std::string_view name)
{
    for (const Label& l : m.labels)
        if (l.name == name)
            return &l;
    return nullptr;
}

// What render_bars() and render_json() know of a histogram: its event, field and unit, and
// the one key label that splits it, if any.
HistogramLabel histogram_label(const Metric& m)
{
    HistogramLabel label{"", m.name, m.unit, "", ""};
    for (const Label& l : m.labels) {
        if (l.name == "event") {
            label.event = l.value;
        } else {
            label.key_name = l.name;
            label.key = l.value;
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

void render_counter_table(const Reading& reading, Output& out)
{
    const auto& columns = reading.counter_labels;
    std::vector<const Metric*> rows;
    for (const Metric& m : reading.metrics)
        if (std::holds_alternative<std::uint64_t>(m.value))
            rows.push_back(&m);
    std::size_t first_width = 5;
    if (!columns.empty()) {
        first_width = std::max(first_width, columns[0].size());
        for (const Metric* m : rows)
            if (const Label* l = find_label(*m, columns[0]))
                first_width = std::max(first_width, l->value.size());
    }
    auto line = [&](auto&& cell_of, std::string_view count) {
        std::string text;
        for (std::size_t i = 0; i < columns.size(); i++)
            text += i == 0 ? fmt::format("{:<{}}", cell_of(i), first_width)
                           : fmt::format(" {:<16}", cell_of(i));
        out.print("{} {:>12}\n", text, count);
    };
    line([&](std::size_t i) { return upper(columns[i]); }, "COUNT");
    for (const Metric* m : rows) {
        line([&](std::size_t i) {
                 const Label* l = find_label(*m, columns[i]);
                 return l ? l->value : std::string();
             },
             std::to_string(std::get<std::uint64_t>(m->value)));
    }
    out.append("\n");
}

} // namespace

void render_text(const Reading& reading, Output& out)
{
    if (!reading.counter_labels.empty())
        render_counter_table(reading, out);
    for (const Metric& m : reading.metrics)
        if (const auto* hist = std::get_if<Histogram>(&m.value))
            out.print("{}\n", render_bars(*hist, histogram_label(m)));
}

void render_json(const Reading& reading, Output& out)
{
    for (const Metric& m : reading.metrics) {
        if (const auto* hist = std::get_if<Histogram>(&m.value)) {
            out.print("{}\n", render_json(*hist, histogram_label(m)));
            continue;
        }
        JsonObject obj;
        for (const Label& l : m.labels) {
            if (l.number)
                obj.add_raw(l.name, l.value);
            else
                obj.add(l.name, l.value);
        }
        out.print("{}\n", obj.add("count", std::get<std::uint64_t>(m.value)).str());
    }
}

void CumulativeMetrics::add(const Reading& delta)
{
    for (const Metric& m : delta.metrics) {
        std::string id = m.name;
        for (const Label& l : m.labels)
            id += '\0' + l.name + '=' + l.value;
        auto [it, inserted] = index_.try_emplace(id, totals_.size());
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
}

} // namespace tpkit
