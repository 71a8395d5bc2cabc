// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "output/exposition.hpp"

#include "tpkit/support/json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tpkit {

namespace {

// Label values escape backslash, double quote and newline; HELP text backslash and newline.
// Both must be UTF-8, as one bad value would make the scraper reject the whole scrape: a byte
// that is not (a comm can hold any) becomes the character of its Latin-1 code, as in tpkit's
// JSON (\u00XX), so that values differing in such bytes stay distinct series.
std::string escape(std::string_view text, bool quote)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); i++) {
        const char c = text[i];
        if (static_cast<unsigned char>(c) >= 0x80) {
            const std::size_t n = utf8_sequence(text, i);
            if (n == 0) {
                const auto byte = static_cast<unsigned char>(c); // U+00XX in UTF-8:
                out += static_cast<char>(0xC0 | (byte >> 6));
                out += static_cast<char>(0x80 | (byte & 0x3F));
            } else {
                out.append(text.substr(i, n));
                i += n - 1;
            }
        } else if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '"' && quote) {
            out += "\\\"";
        } else {
            out += c;
        }
    }
    return out;
}

std::string format_value(double v)
{
    if (std::isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    if (std::isnan(v))
        return "NaN";
    // Integers print as integers, whatever their size; others in the shortest exact form.
    if (v == std::floor(v) && std::fabs(v) < 1e15)
        return fmt::format("{}", static_cast<std::int64_t>(v));
    return fmt::format("{}", v);
}

std::string label_set(const std::vector<Label>& labels, const std::string& le = {})
{
    if (labels.empty() && le.empty())
        return {};
    std::string out = "{";
    for (const Label& l : labels) {
        if (out.size() > 1)
            out += ',';
        out += fmt::format("{}=\"{}\"", l.name, escape(l.value, true));
    }
    if (!le.empty()) {
        if (out.size() > 1)
            out += ',';
        out += fmt::format("le=\"{}\"", le);
    }
    return out + "}";
}

const char* type_name(MetricType type)
{
    switch (type) {
    case MetricType::counter:
        return "counter";
    case MetricType::histogram:
        return "histogram";
    case MetricType::gauge:
        break;
    }
    return "gauge";
}

// v * multiplier, divided where the multiplier is 1/N so that 3 us is 3e-06 s, not 2.9999…e-06.
double scaled(std::uint64_t v, double multiplier)
{
    const double divisor = std::round(1 / multiplier);
    if (multiplier < 1 && std::fabs(1 / multiplier - divisor) < 1e-9 * divisor)
        return static_cast<double>(v) / divisor;
    return static_cast<double>(v) * multiplier;
}

} // namespace

ExpositionFormat negotiate_exposition(std::string_view accept)
{
    return accept.find("application/openmetrics-text") != std::string_view::npos
               ? ExpositionFormat::openmetrics
               : ExpositionFormat::prometheus;
}

std::string_view exposition_content_type(ExpositionFormat format)
{
    return format == ExpositionFormat::openmetrics
               ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
               : "text/plain; version=0.0.4; charset=utf-8";
}

bool valid_metric_name(std::string_view name)
{
    if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
        return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    return true;
}

ExposedHistogram expose_histogram(const Histogram& hist, double multiplier)
{
    ExposedHistogram out;
    std::uint64_t running = 0;
    for (const Bucket& b : hist.buckets()) {
        running += b.count;
        if (hist.is_overflow(b) || b.high == std::numeric_limits<std::uint64_t>::max())
            continue; // the +Inf bucket below
        out.buckets.emplace_back(scaled(b.high, multiplier), running);
    }
    out.count = hist.total();
    out.buckets.emplace_back(std::numeric_limits<double>::infinity(), out.count);
    return out;
}

std::string render_exposition(const std::vector<MetricFamily>& families, ExpositionFormat format)
{
    const bool om = format == ExpositionFormat::openmetrics;
    std::string out;
    for (const MetricFamily& f : families) {
        // The text format names a counter family by its samples' name; OpenMetrics without _total.
        const std::string family =
            f.type == MetricType::counter && !om ? f.name + "_total" : f.name;
        out += fmt::format("# HELP {} {}\n", family, escape(f.help, false));
        out += fmt::format("# TYPE {} {}\n", family, type_name(f.type));
        if (om && !f.unit.empty())
            out += fmt::format("# UNIT {} {}\n", family, f.unit);
        for (const Series& s : f.series) {
            if (const auto* v = std::get_if<double>(&s.value)) {
                const std::string sample = f.type == MetricType::counter ? f.name + "_total" : f.name;
                out += fmt::format("{}{} {}\n", sample, label_set(s.labels), format_value(*v));
                continue;
            }
            const auto& h = std::get<ExposedHistogram>(s.value);
            for (const auto& [le, count] : h.buckets)
                out += fmt::format("{}_bucket{} {}\n", f.name, label_set(s.labels, format_value(le)),
                                   count);
            out += fmt::format("{}_count{} {}\n", f.name, label_set(s.labels), h.count);
            if (h.sum)
                out += fmt::format("{}_sum{} {}\n", f.name, label_set(s.labels), format_value(*h.sum));
        }
    }
    if (om)
        out += "# EOF\n";
    return out;
}

} // namespace tpkit
