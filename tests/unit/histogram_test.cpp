// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/output/histogram.hpp"

#include "tpkit/hist.h"
#include "tpkit/support/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

using tpkit::Bucket;
using tpkit::Histogram;
using tpkit::HistogramLabel;
using tpkit::LinearRange;

namespace {

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t pow2(unsigned i) { return std::uint64_t{1} << i; }

// Values worth trying for any slot function: every small one, both sides of every power of two,
// and random ones of every magnitude.
std::vector<std::uint64_t> probe_values()
{
    std::vector<std::uint64_t> values;
    for (std::uint64_t v = 0; v <= 70000; v++)
        values.push_back(v);
    for (unsigned i = 0; i < 64; i++) {
        for (std::uint64_t d = 0; d <= 3; d++) {
            values.push_back(pow2(i) + d);
            values.push_back(pow2(i) - d);
        }
    }
    values.push_back(u64_max);
    values.push_back(u64_max - 1);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 20000; i++)
        values.push_back(rng() >> (rng() % 64));
    return values;
}

// A histogram with a distinct count in every slot (slot s holds s + 1, or s when slot 0 must
// stay empty), and the bucket of each slot found by its count: so the test relies on nothing
// but the counts, not on how slots are laid out into buckets.
struct SlotMap {
    Histogram hist;
    std::map<std::uint64_t, Bucket> by_count;
    std::uint64_t shift;

    const Bucket& bucket_of_slot(std::uint32_t slot) const { return by_count.at(slot + shift); }
};

SlotMap slot_map(std::size_t slot_count, bool first_slot_empty, auto make)
{
    std::uint64_t shift = first_slot_empty ? 0 : 1;
    std::vector<std::uint64_t> counts(slot_count);
    for (std::size_t s = 0; s < slot_count; s++)
        counts[s] = s + shift;
    SlotMap m{make(counts), {}, shift};
    for (const Bucket& b : m.hist.buckets())
        m.by_count[b.count] = b;
    return m;
}

// Buckets are in value order, disjoint and cover every __u64.
void expect_partition(const Histogram& h)
{
    const auto& b = h.buckets();
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(b.front().low, 0u);
    EXPECT_EQ(b.back().high, u64_max);
    for (std::size_t i = 0; i < b.size(); i++) {
        EXPECT_LE(b[i].low, b[i].high) << i;
        if (i > 0) {
            EXPECT_EQ(b[i].low, b[i - 1].high + 1) << i;
        }
    }
}

std::vector<std::uint64_t> counts_at(std::size_t size, std::map<std::size_t, std::uint64_t> nonzero)
{
    std::vector<std::uint64_t> counts(size);
    for (auto [slot, count] : nonzero)
        counts[slot] = count;
    return counts;
}

} // namespace

TEST(HistSlots, Log2AtBoundaries)
{
    struct Case {
        std::uint64_t value;
        std::uint32_t slot;
    };
    for (Case c : std::vector<Case>{{0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 2}, {7, 2}, {8, 3}, {255, 7}, {256, 8},
                                    {65535, 15}, {65536, 16}, {pow2(32) - 1, 31}, {pow2(32), 32},
                                    {pow2(33) - 1, 32}, {pow2(63) - 1, 62}, {pow2(63), 63}, {u64_max, 63}}) {
        EXPECT_EQ(tpkit_log2_u64(c.value), c.slot) << c.value;
        if (c.value <= 0xFFFFFFFFu) {
            EXPECT_EQ(tpkit_log2_u32(static_cast<__u32>(c.value)), c.slot) << c.value;
        }
    }
}

TEST(HistSlots, Log2MatchesDefinition)
{
    for (std::uint64_t v : probe_values()) {
        std::uint32_t expected = 0;
        while (expected < 63 && (v >> (expected + 1)) != 0)
            expected++;
        ASSERT_EQ(tpkit_log2_u64(v), expected) << v;
    }
}

TEST(HistSlots, LogLinearKnownSlots)
{
    // sub_bits 2: values 0..3 exact, then four sub-buckets per power of two.
    struct Case {
        std::uint64_t value;
        std::uint32_t slot;
    };
    for (Case c : std::vector<Case>{{0, 0}, {1, 1}, {3, 3}, {4, 4}, {5, 5}, {7, 7}, {8, 8}, {9, 8}, {10, 9},
                                    {11, 9}, {12, 10}, {15, 11}, {16, 12}, {19, 12}, {20, 13}, {31, 15},
                                    {32, 16}, {u64_max, 251}}) {
        EXPECT_EQ(tpkit_loglinear_slot(c.value, 2), c.slot) << c.value;
    }
    EXPECT_EQ(tpkit_loglinear_slot(1, 1), 1u);
    EXPECT_EQ(tpkit_loglinear_slot(2, 1), 2u);
    EXPECT_EQ(tpkit_loglinear_slot(3, 1), 3u);
    EXPECT_EQ(tpkit_loglinear_slot(4, 1), 4u);
    EXPECT_EQ(tpkit_loglinear_slot(5, 1), 4u);
    EXPECT_EQ(tpkit_loglinear_slot(6, 1), 5u);
    EXPECT_EQ(tpkit_loglinear_slot(15, 4), 15u);
    EXPECT_EQ(tpkit_loglinear_slot(16, 4), 16u);
    EXPECT_EQ(tpkit_loglinear_slot(17, 4), 17u);
    EXPECT_EQ(tpkit_loglinear_slot(32, 4), 32u);
    EXPECT_EQ(tpkit_loglinear_slot(33, 4), 32u);
    EXPECT_EQ(tpkit_loglinear_slot(34, 4), 33u);
    EXPECT_EQ(TPKIT_LOGLINEAR_SLOTS, 976);
    for (unsigned k = 1; k <= TPKIT_LOGLINEAR_MAX_SUB_BITS; k++)
        EXPECT_EQ(tpkit_loglinear_slot(u64_max, k) + 1u, static_cast<unsigned>(TPKIT_LOGLINEAR_SLOTS_FOR(k))) << k;
}

TEST(HistSlots, LinearKnownSlots)
{
    // (100, 200, 10): slot 0 below 100, slots 1..10, slot 11 at or above 200.
    EXPECT_EQ(tpkit_linear_slot(0, 100, 200, 10), 0u);
    EXPECT_EQ(tpkit_linear_slot(99, 100, 200, 10), 0u);
    EXPECT_EQ(tpkit_linear_slot(100, 100, 200, 10), 1u);
    EXPECT_EQ(tpkit_linear_slot(109, 100, 200, 10), 1u);
    EXPECT_EQ(tpkit_linear_slot(110, 100, 200, 10), 2u);
    EXPECT_EQ(tpkit_linear_slot(199, 100, 200, 10), 10u);
    EXPECT_EQ(tpkit_linear_slot(200, 100, 200, 10), 11u);
    EXPECT_EQ(tpkit_linear_slot(u64_max, 100, 200, 10), 11u);
    // Whatever the shape, the slot stays inside a fixed array.
    EXPECT_EQ(tpkit_linear_slot(u64_max - 1, 0, u64_max, 1), static_cast<unsigned>(TPKIT_LINEAR_MAX_BUCKETS));
    EXPECT_EQ(tpkit_linear_slot(u64_max, 0, u64_max, 1), static_cast<unsigned>(TPKIT_LINEAR_SLOTS - 1));
}

TEST(HistBuckets, Log2ValuesLandInTheirBucket)
{
    SlotMap m = slot_map(TPKIT_LOG2_SLOTS, false, [](const auto& c) { return Histogram::from_log2(c); });
    expect_partition(m.hist);
    EXPECT_EQ(m.hist.buckets().size(), std::size_t(TPKIT_LOG2_SLOTS));
    EXPECT_EQ(m.hist.buckets()[0], (Bucket{0, 1, 1}));
    EXPECT_EQ(m.hist.buckets()[1], (Bucket{2, 3, 2}));
    EXPECT_EQ(m.hist.buckets()[63], (Bucket{pow2(63), u64_max, 64}));
    for (std::uint64_t v : probe_values()) {
        const Bucket& b = m.bucket_of_slot(tpkit_log2_u64(v));
        ASSERT_TRUE(b.low <= v && v <= b.high) << v << " in [" << b.low << ", " << b.high << "]";
    }
}

TEST(HistBuckets, LogLinearValuesLandInTheirBucket)
{
    std::vector<std::uint64_t> values = probe_values();
    for (unsigned k = 1; k <= TPKIT_LOGLINEAR_MAX_SUB_BITS; k++) {
        SlotMap m = slot_map(TPKIT_LOGLINEAR_SLOTS_FOR(k), false,
                             [k](const auto& c) { return Histogram::from_loglinear(c, k); });
        expect_partition(m.hist);
        EXPECT_EQ(m.hist.buckets().size(), static_cast<std::size_t>(TPKIT_LOGLINEAR_SLOTS_FOR(k)));
        for (std::uint64_t v : values) {
            const Bucket& b = m.bucket_of_slot(tpkit_loglinear_slot(v, k));
            ASSERT_TRUE(b.low <= v && v <= b.high) << "k=" << k << " " << v << " in [" << b.low << ", " << b.high << "]";
        }
    }
}

TEST(HistBuckets, LinearValuesLandInTheirBucket)
{
    std::vector<std::uint64_t> values = probe_values();
    for (LinearRange r : std::vector<LinearRange>{{0, 100, 10},
                                                  {100, 1100, 1},
                                                  {7, 7 + 3 * TPKIT_LINEAR_MAX_BUCKETS, 3},
                                                  {pow2(10), pow2(10) + 1023 * pow2(54), pow2(54)},
                                                  {1, 2, 1}}) {
        SlotMap m = slot_map(r.buckets() + 2, r.min == 0,
                             [r](const auto& c) { return Histogram::from_linear(c, r); });
        expect_partition(m.hist);
        EXPECT_EQ(m.hist.buckets().size(), r.buckets() + (r.min == 0 ? 1 : 2));
        EXPECT_TRUE(m.hist.is_overflow(m.hist.buckets().back()));
        EXPECT_EQ(m.hist.is_underflow(m.hist.buckets().front()), r.min > 0);
        for (std::uint64_t v : values) {
            const Bucket& b = m.bucket_of_slot(tpkit_linear_slot(v, r.min, r.max, r.step));
            ASSERT_TRUE(b.low <= v && v <= b.high)
                << "(" << r.min << "," << r.max << "," << r.step << ") " << v << " in [" << b.low << ", " << b.high
                << "]";
        }
    }
}

TEST(HistShape, LinearRangeValidation)
{
    EXPECT_EQ(tpkit::linear_range(0, 1024, 1).buckets(), 1024u);
    struct Case {
        std::uint64_t min, max, step;
        const char* message;
    };
    for (Case c : std::vector<Case>{
             {0, 100, 0, "linear histogram: step must be greater than 0"},
             {100, 100, 1, "linear histogram: min (100) must be below max (100)"},
             {200, 100, 1, "linear histogram: min (200) must be below max (100)"},
             {0, 1000, 300, "linear histogram: max - min (1000) must be a multiple of step (300)"},
             {0, 1025, 1, "linear histogram: (max - min) / step = 1025 buckets, at most 1024 allowed"}}) {
        try {
            tpkit::linear_range(c.min, c.max, c.step);
            ADD_FAILURE() << "accepted " << c.message;
        } catch (const tpkit::Error& e) {
            EXPECT_EQ(e.code(), tpkit::Exit::usage);
            EXPECT_STREQ(e.what(), c.message);
        }
    }
    EXPECT_THROW(Histogram::from_linear({}, LinearRange{0, 10, 3}), tpkit::Error);
    EXPECT_THROW(tpkit::loglinear_sub_bits(0), tpkit::Error);
    EXPECT_THROW(tpkit::loglinear_sub_bits(5), tpkit::Error);
    EXPECT_THROW(Histogram::from_loglinear({}, 5), tpkit::Error);
    EXPECT_EQ(tpkit::loglinear_sub_bits(4), 4u);
}

TEST(HistShape, SlotsBeyondTheShapeMustBeEmpty)
{
    // A whole fixed-size BPF array is fine while the unused tail is zero.
    std::vector<std::uint64_t> slots(TPKIT_LINEAR_SLOTS);
    slots[3] = 5;
    Histogram h = Histogram::from_linear(slots, {0, 100, 10});
    EXPECT_EQ(h.total(), 5u);
    EXPECT_EQ(h.buckets()[2], (Bucket{20, 29, 5}));
    slots[12] = 1;
    EXPECT_THROW(Histogram::from_linear(slots, {0, 100, 10}), tpkit::Error);
    // Slot 0 of a linear histogram starting at 0 cannot hold anything.
    EXPECT_THROW(Histogram::from_linear(std::vector<std::uint64_t>{1}, {0, 100, 10}), tpkit::Error);
    // Shorter spans: the missing slots are empty.
    EXPECT_EQ(Histogram::from_log2(std::vector<std::uint64_t>{0, 2, 3}).total(), 5u);
    EXPECT_THROW(Histogram::from_log2(std::vector<std::uint64_t>(65, 1)), tpkit::Error);
    std::vector<std::uint64_t> loglinear(TPKIT_LOGLINEAR_SLOTS);
    loglinear[TPKIT_LOGLINEAR_SLOTS_FOR(2) - 1] = 1;
    EXPECT_EQ(Histogram::from_loglinear(loglinear, 2).buckets().back().count, 1u);
    loglinear[TPKIT_LOGLINEAR_SLOTS_FOR(2)] = 1;
    EXPECT_THROW(Histogram::from_loglinear(loglinear, 2), tpkit::Error);
}

TEST(HistPercentile, EmptyHistogram)
{
    Histogram h = Histogram::from_log2({});
    EXPECT_EQ(h.total(), 0u);
    EXPECT_TRUE(h.nonempty_span().empty());
    EXPECT_EQ(h.percentile(50), std::nullopt);
    EXPECT_EQ(h.percentile(0), std::nullopt);
    // The heading alone (bcc prints nothing): a run that counted nothing says so.
    EXPECT_EQ(tpkit::render_bars(h, {"net:netif_rx", "len", "bytes", "lo", "dev"}),
              "dev = lo\n     len                 : count    distribution\n");
    EXPECT_EQ(tpkit::render_bars(Histogram::from_linear({}, {0, 10, 1}), {"", "v", "", "", ""}),
              "     v             : count     distribution\n");
}

TEST(HistPercentile, OutOfRange)
{
    Histogram h = Histogram::from_log2(std::vector<std::uint64_t>{1});
    EXPECT_THROW(h.percentile(-1), tpkit::Error);
    EXPECT_THROW(h.percentile(100.5), tpkit::Error);
    EXPECT_THROW(h.percentile(std::numeric_limits<double>::quiet_NaN()), tpkit::Error);
}

TEST(HistPercentile, OneValueBucketsAreExact)
{
    // 1..100 once each, in buckets of one value: the nearest-rank percentiles.
    std::vector<std::uint64_t> slots(102);
    for (std::uint64_t v = 1; v <= 100; v++)
        slots[tpkit_linear_slot(v, 1, 101, 1)]++;
    Histogram h = Histogram::from_linear(slots, {1, 101, 1});
    EXPECT_EQ(h.total(), 100u);
    EXPECT_EQ(h.percentile(0), 1u);
    EXPECT_EQ(h.percentile(1), 1u);
    EXPECT_EQ(h.percentile(50), 50u);
    EXPECT_EQ(h.percentile(90), 90u);
    EXPECT_EQ(h.percentile(99), 99u);
    EXPECT_EQ(h.percentile(100), 100u);
}

TEST(HistPercentile, MatchesNearestRankOnRandomData)
{
    // Oracle: sort the values. With one-value buckets the estimate is the nearest-rank
    // percentile; with log2 and log-linear buckets it lies in the bucket holding it.
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> dist(5, 1.5);
    std::vector<std::uint64_t> values;
    for (int i = 0; i < 5000; i++)
        values.push_back(static_cast<std::uint64_t>(dist(rng)) % 1000);
    std::vector<std::uint64_t> linear(TPKIT_LINEAR_SLOTS), log2(TPKIT_LOG2_SLOTS), loglinear(TPKIT_LOGLINEAR_SLOTS);
    for (std::uint64_t v : values) {
        linear[tpkit_linear_slot(v, 0, 1000, 1)]++;
        log2[tpkit_log2_u64(v)]++;
        loglinear[tpkit_loglinear_slot(v, 3)]++;
    }
    Histogram hl = Histogram::from_linear(linear, {0, 1000, 1});
    Histogram h2 = Histogram::from_log2(log2);
    Histogram hll = Histogram::from_loglinear(loglinear, 3);
    std::sort(values.begin(), values.end());
    for (double p : {0.5, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 100.0}) {
        auto rank = static_cast<std::size_t>(std::ceil(p * values.size() / 100));
        std::uint64_t truth = values[rank == 0 ? 0 : rank - 1];
        EXPECT_EQ(hl.percentile(p), truth) << p;
        auto b2 = h2.buckets()[tpkit_log2_u64(truth)];
        EXPECT_GE(*h2.percentile(p), b2.low) << p;
        EXPECT_LE(*h2.percentile(p), b2.high) << p;
        auto bll = hll.buckets()[tpkit_loglinear_slot(truth, 3)];
        EXPECT_GE(*hll.percentile(p), bll.low) << p;
        EXPECT_LE(*hll.percentile(p), bll.high) << p;
    }
}

TEST(HistPercentile, InterpolatesInsideABucket)
{
    // 100 values in 64..127: taken as spread evenly over [64, 128).
    Histogram one = Histogram::from_log2(counts_at(64, {{6, 100}}));
    EXPECT_EQ(one.percentile(0), 64u);
    EXPECT_EQ(one.percentile(50), 96u);
    EXPECT_EQ(one.percentile(90), 121u);
    EXPECT_EQ(one.percentile(99), 127u);
    EXPECT_EQ(one.percentile(100), 127u);
    // 10 in 0..1, 30 in 4..7, 60 in 8..15: p50 is 1/6 of the way into 8..15.
    Histogram three = Histogram::from_log2(counts_at(64, {{0, 10}, {2, 30}, {3, 60}}));
    EXPECT_EQ(three.percentile(10), 1u);
    EXPECT_EQ(three.percentile(20), 5u);
    EXPECT_EQ(three.percentile(40), 7u);
    EXPECT_EQ(three.percentile(50), 9u);
    EXPECT_EQ(three.percentile(100), 15u);
    // The top log2 bucket spans 2^63 values.
    Histogram top = Histogram::from_log2(counts_at(64, {{63, 2}}));
    EXPECT_EQ(top.percentile(50), pow2(63) + pow2(62));
    EXPECT_EQ(top.percentile(100), u64_max);
}

TEST(HistPercentile, LinearOverflowIsALowerBound)
{
    // (0, 100, 10): 5 values in 20..29, 5 at or above 100.
    Histogram h = Histogram::from_linear(counts_at(12, {{3, 5}, {11, 5}}), {0, 100, 10});
    EXPECT_EQ(h.percentile(50), 29u);
    EXPECT_EQ(h.percentile(60), 100u);
    EXPECT_EQ(h.percentile(100), 100u);
}

// Golden texts: the bars are what bcc's libbpf-tools print_log2_hist / print_linear_hist print
// for the same counts (leading empty rows, which print_log2_hist keeps, left out here).
TEST(HistRender, Log2BarsLikeBcc)
{
    Histogram h = Histogram::from_log2(counts_at(64, {{0, 3}, {2, 1}, {3, 7}, {4, 12}, {5, 5}, {7, 123456}}));
    EXPECT_EQ(tpkit::render_bars(h, {"net:netif_receive_skb", "len", "bytes", "", ""}),
              "     len                 : count    distribution\n"
              "         0 -> 1          : 3        |                                        |\n"
              "         2 -> 3          : 0        |                                        |\n"
              "         4 -> 7          : 1        |                                        |\n"
              "         8 -> 15         : 7        |                                        |\n"
              "        16 -> 31         : 12       |                                        |\n"
              "        32 -> 63         : 5        |                                        |\n"
              "        64 -> 127        : 0        |                                        |\n"
              "       128 -> 255        : 123456   |****************************************|\n"
              "p50 in [128, 255], p90 in [128, 255], p99 in [128, 255] (bytes)\n");
}

TEST(HistRender, Log2LeadingEmptyRowsLeftOutAndKeyHeading)
{
    // Total 43. p50: rank 21.5, in 64..127; p99: rank 42.57, 41 before 512..1023.
    Histogram h = Histogram::from_log2(counts_at(64, {{6, 40}, {7, 1}, {9, 2}}));
    EXPECT_EQ(tpkit::render_bars(h, {"net:netif_receive_skb", "len", "bytes", "lo", "dev"}),
              "dev = lo\n"
              "     len                 : count    distribution\n"
              "        64 -> 127        : 40       |****************************************|\n"
              "       128 -> 255        : 1        |*                                       |\n"
              "       256 -> 511        : 0        |                                        |\n"
              "       512 -> 1023       : 2        |**                                      |\n"
              "p50 in [64, 127], p90 in [64, 127], p99 in [512, 1023] (bytes)\n");
}

TEST(HistRender, Log2WideColumnsPastSlot32)
{
    Histogram h = Histogram::from_log2(counts_at(64, {{0, 2}, {5, 9}, {33, 4}, {40, 17}}));
    std::string text = tpkit::render_bars(h, {"", "", "nsecs", "", ""});
    std::string expected = "               nsecs                         : count    distribution\n"
                           "                   0 -> 1                    : 2        |**                  |\n"
                           "                   2 -> 3                    : 0        |                    |\n";
    EXPECT_EQ(text.substr(0, expected.size()), expected);
    EXPECT_NE(text.find("\n          8589934592 -> 17179869183          : 4        |****                |\n"),
              std::string::npos);
    EXPECT_NE(text.find("\n       1099511627776 -> 2199023255551        : 17       |********************|\n"
                        "p50 in ["),
              std::string::npos);
    // Slot 32 still fits the narrow columns.
    Histogram narrow = Histogram::from_log2(counts_at(64, {{32, 1}}));
    EXPECT_EQ(tpkit::render_bars(narrow, {"", "v", "", "", ""}),
              "     v                   : count    distribution\n"
              "4294967296 -> 8589934591 : 1        |****************************************|\n"
              "p50 in [4294967296, 8589934591], p90 in [4294967296, 8589934591], "
              "p99 in [4294967296, 8589934591]\n");
}

TEST(HistRender, LinearBarsLikeBcc)
{
    // bcc's print_linear_hist(vals, 20, base 100, step 10) with vals[3]=5, [4]=1, [7]=20, [12]=3:
    // here slot i + 1 is bcc's vals[i]. Total 29; p50: rank 14.5, 6 before 170..179; p90 and
    // p99: ranks 26.1 and 28.71, 26 before 220..229.
    Histogram h = Histogram::from_linear(counts_at(22, {{4, 5}, {5, 1}, {8, 20}, {13, 3}}), {100, 300, 10});
    EXPECT_EQ(tpkit::render_bars(h, {"", "len", "", "", ""}),
              "     len           : count     distribution\n"
              "        130        : 5        |**********                              |\n"
              "        140        : 1        |**                                      |\n"
              "        170        : 20       |****************************************|\n"
              "        220        : 3        |******                                  |\n"
              "p50 in [170, 179], p90 in [220, 229], p99 in [220, 229]\n");
    Histogram edges = Histogram::from_linear(counts_at(22, {{0, 2}, {1, 1}, {21, 4}}), {100, 300, 10});
    EXPECT_EQ(tpkit::render_bars(edges, {"", "len", "bytes", "", ""}),
              "     len           : count     distribution\n"
              "        < 100      : 2        |********************                    |\n"
              "        100        : 1        |**********                              |\n"
              "        >= 300     : 4        |****************************************|\n"
              "p50 >= 300, p90 >= 300, p99 >= 300 (bytes)\n");
}

TEST(HistRender, PercentilesSayTheirBucketOrTheirValue)
{
    // Linear (100, 300, 10): 5 below 100, 1 in 100..109 — p50 below the minimum, p99 in a bucket.
    Histogram low = Histogram::from_linear(counts_at(22, {{0, 5}, {1, 1}}), {100, 300, 10});
    std::string text = tpkit::render_bars(low, {"", "len", "", "", ""});
    EXPECT_EQ(text.substr(text.rfind("p50")), "p50 < 100, p90 in [100, 109], p99 in [100, 109]\n");
    // Linear buckets one value wide: the percentiles are values that occurred, exactly.
    Histogram exact = Histogram::from_linear(counts_at(12, {{4, 6}, {8, 4}}), {0, 10, 1});
    text = tpkit::render_bars(exact, {"", "len", "", "", ""});
    EXPECT_EQ(text.substr(text.rfind("p50")), "p50 = 3, p90 = 7, p99 = 7\n");
}

TEST(HistRender, LogLinearBars)
{
    // sub_bits 2: 3 and 12..15 and 16..19.
    Histogram h = Histogram::from_loglinear(counts_at(TPKIT_LOGLINEAR_SLOTS, {{3, 1}, {11, 4}, {12, 2}}), 2);
    EXPECT_EQ(tpkit::render_bars(h, {"", "len", "", "", ""}),
              "     len                 : count    distribution\n"
              "         3 -> 3          : 1        |**********                              |\n"
              "         4 -> 4          : 0        |                                        |\n"
              "         5 -> 5          : 0        |                                        |\n"
              "         6 -> 6          : 0        |                                        |\n"
              "         7 -> 7          : 0        |                                        |\n"
              "         8 -> 9          : 0        |                                        |\n"
              "        10 -> 11         : 0        |                                        |\n"
              "        12 -> 13         : 0        |                                        |\n"
              "        14 -> 15         : 4        |****************************************|\n"
              "        16 -> 19         : 2        |********************                    |\n"
              "p50 in [14, 15], p90 in [16, 19], p99 in [16, 19]\n");
}

TEST(HistRender, Json)
{
    // p90: rank 3.6, 3 before 256..511.
    Histogram h = Histogram::from_log2(counts_at(64, {{6, 3}, {8, 1}}));
    EXPECT_EQ(tpkit::render_json(h, {"net:netif_receive_skb", "len", "bytes", "lo", "dev"}),
              R"({"event":"net:netif_receive_skb","field":"len","unit":"bytes","key":"lo","buckets":[)"
              R"({"low":64,"high":127,"count":3},{"low":128,"high":255,"count":0},{"low":256,"high":511,"count":1}],)"
              R"("total":4,"p50":{"low":64,"high":127},"p90":{"low":256,"high":511},"p99":{"low":256,"high":511}})");
    EXPECT_EQ(tpkit::render_json(Histogram::from_log2({}), {"net:netif_rx", "len", "", "", ""}),
              R"({"event":"net:netif_rx","field":"len","unit":"","buckets":[],"total":0,"p50":null,"p90":null,"p99":null})");
    Histogram top = Histogram::from_linear(counts_at(3, {{2, 1}}), {5, 6, 1});
    EXPECT_EQ(tpkit::render_json(top, {"a:b", "f", "", "", ""}),
              R"({"event":"a:b","field":"f","unit":"","buckets":[{"low":6,"high":18446744073709551615,"count":1}],)"
              R"("total":1,"p50":{"low":6,"high":18446744073709551615},"p90":{"low":6,"high":18446744073709551615},)"
              R"("p99":{"low":6,"high":18446744073709551615}})");
}

TEST(HistRender, JsonEscapesLabels)
{
    Histogram h = Histogram::from_log2(counts_at(64, {{1, 1}}));
    std::string json = tpkit::render_json(h, {"x:y", "a\"b\\c", "\n\t\x01\x7f", "caf\xc3\xa9 \xff\xc3", ""});
    EXPECT_EQ(json, R"({"event":"x:y","field":"a\"b\\c","unit":"\n\t\u0001\u007f","key":"café \u00ff\u00c3",)"
                    R"("buckets":[{"low":2,"high":3,"count":1}],"total":1,"p50":{"low":2,"high":3},"p90":{"low":2,"high":3},)"
                    R"("p99":{"low":2,"high":3}})");
}
