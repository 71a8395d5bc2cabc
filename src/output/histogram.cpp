// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/output/histogram.hpp"

#include "tpkit/hist.h"
#include "tpkit/support/error.hpp"
#include "tpkit/support/json.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tpkit {
namespace {

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

// Inverse of tpkit_log2_u64: the values of log2 slot i.
Bucket log2_bucket(unsigned i)
{
    if (i == 0)
        return {0, 1, 0};
    std::uint64_t low = std::uint64_t{1} << i;
    return {low, low + (low - 1), 0};
}

// Inverse of tpkit_loglinear_slot.
Bucket loglinear_bucket(unsigned slot, unsigned sub_bits)
{
    unsigned per_power = 1u << sub_bits;
    if (slot < per_power)
        return {slot, slot, 0};
    unsigned exponent = slot / per_power - 1 + sub_bits;
    std::uint64_t width = std::uint64_t{1} << (exponent - sub_bits);
    std::uint64_t low = (std::uint64_t{1} << exponent) + (slot % per_power) * width;
    return {low, low + (width - 1), 0};
}

// Numbers of stars for count in a bar of width stars scaled to max_count, as bcc computes it
// (without its 32-bit overflow).
std::size_t star_count(std::uint64_t count, std::uint64_t max_count, unsigned width)
{
    return static_cast<std::size_t>(static_cast<unsigned __int128>(count) * width / max_count);
}

std::string bar(std::uint64_t count, std::uint64_t max_count, unsigned width)
{
    std::size_t stars = star_count(count, max_count, width);
    return std::string(stars, '*') + std::string(width - stars, ' ');
}

// The title of the value column: what was measured.
const std::string& value_title(const HistogramLabel& label)
{
    static const std::string fallback = "value";
    if (!label.field.empty())
        return label.field;
    return label.unit.empty() ? fallback : label.unit;
}

constexpr double report_percentiles[] = {50, 90, 99};

} // namespace

LinearRange linear_range(std::uint64_t min, std::uint64_t max, std::uint64_t step)
{
    if (step == 0)
        throw Error(Exit::usage, "linear histogram: step must be greater than 0");
    if (min >= max)
        throw Error(Exit::usage, fmt::format("linear histogram: min ({}) must be below max ({})", min, max));
    if ((max - min) % step != 0)
        throw Error(Exit::usage, fmt::format("linear histogram: max - min ({}) must be a multiple of step ({})",
                                             max - min, step));
    if ((max - min) / step > TPKIT_LINEAR_MAX_BUCKETS)
        throw Error(Exit::usage, fmt::format("linear histogram: (max - min) / step = {} buckets, at most {} allowed",
                                             (max - min) / step, TPKIT_LINEAR_MAX_BUCKETS));
    return {min, max, step};
}

unsigned loglinear_sub_bits(unsigned sub_bits)
{
    if (sub_bits < 1 || sub_bits > TPKIT_LOGLINEAR_MAX_SUB_BITS)
        throw Error(Exit::usage, fmt::format("log-linear histogram: sub-bucket bits must be 1..{}, not {}",
                                             TPKIT_LOGLINEAR_MAX_SUB_BITS, sub_bits));
    return sub_bits;
}

void Histogram::add_slots(std::span<const std::uint64_t> slots, std::size_t slot_count)
{
    for (std::size_t i = slot_count; i < slots.size(); i++) {
        if (slots[i] != 0)
            throw Error(Exit::failure, fmt::format("histogram: count in slot {}, beyond the {} slots of its shape",
                                                   i, slot_count));
    }
    // Slots map to buckets_ one to one, except a linear histogram without a below-min bucket.
    std::size_t first_slot = slot_count - buckets_.size();
    for (std::size_t i = 0; i < std::min(slots.size(), slot_count); i++) {
        if (i < first_slot) {
            if (slots[i] != 0)
                throw Error(Exit::failure, "histogram: count below min 0 in a linear histogram");
            continue;
        }
        buckets_[i - first_slot].count = slots[i];
        total_ += slots[i];
    }
}

void Histogram::add(const Histogram& other)
{
    if (other.kind_ != kind_ || other.buckets_.size() != buckets_.size() ||
        other.sub_bits_ != sub_bits_ || !(other.range_.min == range_.min &&
                                          other.range_.max == range_.max &&
                                          other.range_.step == range_.step))
        throw Error(Exit::failure, "histogram: cannot add histograms of different shapes");
    for (std::size_t i = 0; i < buckets_.size(); i++)
        buckets_[i].count += other.buckets_[i].count;
    total_ += other.total_;
}

Histogram Histogram::from_log2(std::span<const std::uint64_t> slots)
{
    Histogram h;
    h.kind_ = HistogramKind::log2;
    for (unsigned i = 0; i < TPKIT_LOG2_SLOTS; i++)
        h.buckets_.push_back(log2_bucket(i));
    h.add_slots(slots, TPKIT_LOG2_SLOTS);
    return h;
}

Histogram Histogram::from_loglinear(std::span<const std::uint64_t> slots, unsigned sub_bits)
{
    Histogram h;
    h.kind_ = HistogramKind::loglinear;
    h.sub_bits_ = loglinear_sub_bits(sub_bits);
    unsigned slot_count = TPKIT_LOGLINEAR_SLOTS_FOR(sub_bits);
    for (unsigned i = 0; i < slot_count; i++)
        h.buckets_.push_back(loglinear_bucket(i, sub_bits));
    h.add_slots(slots, slot_count);
    return h;
}

Histogram Histogram::from_linear(std::span<const std::uint64_t> slots, LinearRange range)
{
    Histogram h;
    h.kind_ = HistogramKind::linear;
    h.range_ = linear_range(range.min, range.max, range.step);
    if (range.min > 0)
        h.buckets_.push_back({0, range.min - 1, 0});
    for (std::uint64_t i = 0; i < range.buckets(); i++) {
        std::uint64_t low = range.min + i * range.step;
        h.buckets_.push_back({low, low + (range.step - 1), 0});
    }
    h.buckets_.push_back({range.max, u64_max, 0});
    h.add_slots(slots, range.buckets() + 2);
    return h;
}

std::span<const Bucket> Histogram::nonempty_span() const
{
    auto nonempty = [](const Bucket& b) { return b.count != 0; };
    auto first = std::find_if(buckets_.begin(), buckets_.end(), nonempty);
    if (first == buckets_.end())
        return {};
    auto last = std::find_if(buckets_.rbegin(), buckets_.rend(), nonempty).base();
    return {first, last};
}

bool Histogram::is_overflow(const Bucket& b) const
{
    return kind_ == HistogramKind::linear && b.low == range_.max;
}

bool Histogram::is_underflow(const Bucket& b) const
{
    return kind_ == HistogramKind::linear && range_.min > 0 && b.high == range_.min - 1;
}

std::optional<Bucket> Histogram::percentile_bucket(double p) const
{
    if (!(p >= 0 && p <= 100))
        throw Error(Exit::usage, fmt::format("percentile {} is outside 0..100", p));
    if (total_ == 0)
        return std::nullopt;
    // Exact for whole percentages: p * total is an exact integer in long double.
    long double rank = static_cast<long double>(p) * total_ / 100;
    std::uint64_t before = 0;
    for (const Bucket& b : buckets_) {
        if (b.count == 0 || before + b.count < rank) {
            before += b.count;
            continue;
        }
        return b;
    }
    return std::nullopt; // not reached: rank <= total
}

std::optional<std::uint64_t> Histogram::percentile(double p) const
{
    std::optional<Bucket> found = percentile_bucket(p);
    if (!found)
        return std::nullopt;
    const Bucket& b = *found;
    if (is_overflow(b))
        return b.low;
    long double rank = static_cast<long double>(p) * total_ / 100, before = 0;
    for (const Bucket& earlier : buckets_) {
        if (earlier.low >= b.low)
            break;
        before += earlier.count;
    }
    long double width = static_cast<long double>(b.high - b.low) + 1;
    long double offset = std::floor(width * (rank - before) / b.count);
    if (offset > static_cast<long double>(b.high - b.low))
        return b.high;
    return b.low + static_cast<std::uint64_t>(offset);
}

namespace {

// Where the percentile lies, as far as the buckets say: "= 5" (a one-value bucket), "in [64,
// 127]", ">= 300" (the linear at-or-above-max bucket), "< 100" (below a linear minimum).
std::string percentile_text(const Histogram& hist, const Bucket& b)
{
    if (hist.is_overflow(b))
        return fmt::format(">= {}", b.low);
    if (hist.is_underflow(b))
        return fmt::format("< {}", b.high + 1);
    if (b.low == b.high)
        return fmt::format("= {}", b.low);
    return fmt::format("in [{}, {}]", b.low, b.high);
}

} // namespace

std::string render_bars(const Histogram& hist, const HistogramLabel& label)
{
    std::span<const Bucket> shown = hist.nonempty_span();
    std::uint64_t max_count = 0;
    for (const Bucket& b : shown)
        max_count = std::max(max_count, b.count);

    std::string out;
    if (!label.key.empty())
        out += fmt::format("{} = {}\n", label.key_name.empty() ? "key" : label.key_name, label.key);

    if (hist.kind() == HistogramKind::linear) {
        // bcc's print_linear_hist: the bucket's first value, empty buckets left out.
        out += fmt::format("     {:<13} : count     distribution\n", value_title(label));
        for (const Bucket& b : shown) {
            if (b.count == 0)
                continue;
            std::string value = hist.is_underflow(b)  ? fmt::format("< {}", hist.range().min)
                                : hist.is_overflow(b) ? fmt::format(">= {}", hist.range().max)
                                                      : std::to_string(b.low);
            out += fmt::format("        {:<10} : {:<8} |{}|\n", value, b.count, bar(b.count, max_count, 40));
        }
    } else {
        // bcc's print_log2_hist: it widens the columns and halves the bars past slot 32, that is
        // once values reach 2^33.
        bool wide = !shown.empty() && shown.back().high >= (std::uint64_t{1} << 33);
        int indent = wide ? 15 : 5, title_width = wide ? 29 : 19, value_width = wide ? 20 : 10;
        unsigned stars = wide ? 20 : 40;
        out += fmt::format("{:{}}{:<{}} : count    distribution\n", "", indent, value_title(label), title_width);
        for (const Bucket& b : shown) {
            out += fmt::format("{:>{}} -> {:<{}} : {:<8} |{}|\n", b.low, value_width, b.high, value_width, b.count,
                               bar(b.count, max_count, stars));
        }
    }
    // Nothing counted: the heading alone, as bcc prints it, so that a run that saw nothing says so.
    if (shown.empty())
        return out;

    std::string percentiles;
    for (double p : report_percentiles)
        percentiles += fmt::format("{}p{} {}", percentiles.empty() ? "" : ", ", p,
                                   percentile_text(hist, *hist.percentile_bucket(p)));
    out += percentiles;
    if (!label.unit.empty())
        out += fmt::format(" ({})", label.unit);
    out += '\n';
    return out;
}

std::string render_json(const Histogram& hist, const HistogramLabel& label)
{
    JsonObject obj;
    obj.add("event", label.event).add("field", label.field).add("unit", label.unit);
    if (!label.key.empty())
        obj.add("key", label.key);
    add_histogram_json(obj, hist);
    return obj.str();
}

void add_histogram_json(JsonObject& obj, const Histogram& hist)
{
    std::string buckets = "[";
    for (const Bucket& b : hist.nonempty_span()) {
        if (buckets.size() > 1)
            buckets += ',';
        buckets += JsonObject().add("low", b.low).add("high", b.high).add("count", b.count).str();
    }
    buckets += ']';
    obj.add_raw("buckets", buckets).add("total", hist.total());
    for (double p : report_percentiles) {
        std::string name = fmt::format("p{}", p);
        if (auto b = hist.percentile_bucket(p))
            obj.add_raw(name, JsonObject().add("low", b->low).add("high", b->high).str());
        else
            obj.add_raw(name, "null");
    }
}

} // namespace tpkit
