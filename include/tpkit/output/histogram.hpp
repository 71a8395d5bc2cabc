// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Histograms read back from BPF maps: the buckets as data (for bars, JSON and exporters),
// percentile estimates, and bcc-style text.
#pragma once

#include "tpkit/support/json.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tpkit {

enum class HistogramKind {
    log2,      // slot = floor(log2(v)), bcc's buckets
    loglinear, // each power of two split into 2^sub_bits equal sub-buckets
    linear,    // (min, max, step), with a below-min and an at-or-above-max bucket
};

// A linear histogram's shape; validate with linear_range().
struct LinearRange {
    std::uint64_t min = 0;
    std::uint64_t max = 0;
    std::uint64_t step = 1;

    std::uint64_t buckets() const { return (max - min) / step; }
};

// Checks a user-given linear shape: min < max, step > 0, (max - min) a multiple of step, and at
// most TPKIT_LINEAR_MAX_BUCKETS buckets. Throws tpkit::Error(Exit::usage) otherwise.
LinearRange linear_range(std::uint64_t min, std::uint64_t max, std::uint64_t step);

// Checks a log-linear sub_bits value (1..TPKIT_LOGLINEAR_MAX_SUB_BITS); throws
// tpkit::Error(Exit::usage) otherwise.
unsigned loglinear_sub_bits(unsigned sub_bits);

struct Bucket {
    std::uint64_t low = 0;
    std::uint64_t high = 0; // inclusive
    std::uint64_t count = 0;

    bool operator==(const Bucket&) const = default;
};

// What a histogram measures: {"net:netif_receive_skb", "len", "bytes", "lo", "dev"}.
struct HistogramLabel {
    std::string event;    // "system:event"
    std::string field;    // the measured field, heads the bars' value column
    std::string unit;     // "bytes", "usecs"; may be empty
    std::string key;      // the key's value when histograms are split by a key ("lo"), else empty
    std::string key_name; // what the key is ("dev"), for the "dev = lo" heading
};

class Histogram {
public:
    // From summed per-slot counts as the BPF side fills them (hist.h). The span may be shorter
    // than the kind's slot count (missing slots are zero); slots beyond it must be zero, else
    // the BPF program and user space disagree on the shape and tpkit::Error is thrown.
    static Histogram from_log2(std::span<const std::uint64_t> slots);
    static Histogram from_loglinear(std::span<const std::uint64_t> slots, unsigned sub_bits);
    static Histogram from_linear(std::span<const std::uint64_t> slots, LinearRange range);

    HistogramKind kind() const { return kind_; }
    unsigned sub_bits() const { return sub_bits_; }       // log-linear only
    const LinearRange& range() const { return range_; }   // linear only

    // Every bucket of the kind, in value order, zeros included; their ranges are disjoint and
    // cover every __u64 (a linear histogram with min == 0 has no below-min bucket).
    const std::vector<Bucket>& buckets() const { return buckets_; }
    // From the first to the last non-empty bucket (empty ones between kept); empty when total()
    // is 0.
    std::span<const Bucket> nonempty_span() const;
    std::uint64_t total() const { return total_; }

    // The p-th percentile (0 <= p <= 100), nullopt for an empty histogram. Estimated from the
    // buckets: the rank r = p/100 * total falls in the first bucket whose running count reaches
    // r; its values are taken as spread evenly over [low, high + 1), so the estimate is
    // low + floor((high + 1 - low) * (r - count before) / count), at most high. Exact for
    // one-value buckets. A linear histogram's at-or-above-max bucket has no upper bound: there
    // the estimate is max, a lower bound. Throws tpkit::Error(Exit::usage) for p outside 0..100.
    std::optional<std::uint64_t> percentile(double p) const;
    // The bucket the p-th percentile falls in: the first whose running count reaches
    // p/100 * total; nullopt for an empty histogram. What the histograms print: the buckets say
    // the percentile is somewhere in [low, high], and no more. Throws as percentile() does.
    std::optional<Bucket> percentile_bucket(double p) const;

    // Adds the counts of a histogram of the same shape (running totals); another shape →
    // Error(failure).
    void add(const Histogram& other);

    // True for the linear at-or-above-max bucket (open-ended, rendered as ">= max").
    bool is_overflow(const Bucket& b) const;
    // True for the linear below-min bucket (rendered as "< min").
    bool is_underflow(const Bucket& b) const;

private:
    Histogram() = default;
    void add_slots(std::span<const std::uint64_t> slots, std::size_t slot_count);

    HistogramKind kind_ = HistogramKind::log2;
    unsigned sub_bits_ = 0;
    LinearRange range_;
    std::vector<Bucket> buckets_;
    std::uint64_t total_ = 0;
};

// bcc's print_log2_hist layout for log2 and log-linear histograms, print_linear_hist's for linear
// ones (40-char bars scaled to the largest count; empty buckets before the first and after the
// last non-empty one left out, and for linear all empty ones, as bcc does; a wider value column
// once values reach 2^33). Preceded by "KEY_NAME = KEY" when the label has a key, followed by
// the bucket of each percentile, "p50 in [64, 127], p90 in [128, 255], p99 = 300 (UNIT)": "= V"
// for a one-value bucket, ">= MAX" and "< MIN" for a linear histogram's open-ended buckets. Every
// line ends with '\n'; an empty histogram renders as its heading alone (bcc prints nothing, which
// looks like a tool that did not run).
std::string render_bars(const Histogram& hist, const HistogramLabel& label);

// One JSON object on one line, without the newline:
// {"event":…,"field":…,"unit":…,"key":…,"buckets":[{"low":L,"high":H,"count":C},…],"total":N,
//  "p50":{"low":L,"high":H},"p90":…,"p99":…}. "key" is left out when empty; buckets are
// nonempty_span(); each percentile is the bucket it falls in (percentile_bucket()), null for an
// empty histogram.
std::string render_json(const Histogram& hist, const HistogramLabel& label);
// Its members from "buckets" on, added to obj: what render_json() writes after the labels.
void add_histogram_json(JsonObject& obj, const Histogram& hist);

} // namespace tpkit
