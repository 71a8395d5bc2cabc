// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Prometheus exposition: families in the text format 0.0.4 and OpenMetrics 1.0, escaping, and
// histogram buckets as cumulative counts at each bucket's true upper bound.
#include "output/exposition.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using tpkit::ExpositionFormat;
using tpkit::MetricFamily;
using tpkit::MetricType;

namespace {

MetricFamily forks()
{
    MetricFamily f{"tpkit_forks", "Processes forked.", "", MetricType::counter, {}};
    f.series.push_back({{{"comm", "sh"}}, 3.0});
    f.series.push_back({{{"comm", "a\"b\\c\nd"}}, 1.0});
    return f;
}

} // namespace

TEST(Exposition, CountersInTheTextFormatNameTheirFamilyWithTotal)
{
    EXPECT_EQ(tpkit::render_exposition({forks()}, ExpositionFormat::prometheus),
              "# HELP tpkit_forks_total Processes forked.\n"
              "# TYPE tpkit_forks_total counter\n"
              "tpkit_forks_total{comm=\"sh\"} 3\n"
              "tpkit_forks_total{comm=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(Exposition, OpenMetricsNamesTheFamilyWithoutTotalAndEnds)
{
    MetricFamily latency{"tpkit_lat_seconds", "Latency\nin s", "seconds", MetricType::gauge, {}};
    latency.series.push_back({{}, 0.25});
    EXPECT_EQ(tpkit::render_exposition({forks(), latency}, ExpositionFormat::openmetrics),
              "# HELP tpkit_forks Processes forked.\n"
              "# TYPE tpkit_forks counter\n"
              "tpkit_forks_total{comm=\"sh\"} 3\n"
              "tpkit_forks_total{comm=\"a\\\"b\\\\c\\nd\"} 1\n"
              "# HELP tpkit_lat_seconds Latency\\nin s\n"
              "# TYPE tpkit_lat_seconds gauge\n"
              "# UNIT tpkit_lat_seconds seconds\n"
              "tpkit_lat_seconds 0.25\n"
              "# EOF\n");
}

TEST(Exposition, Log2BucketsAreCumulativeAtTheirHighestValue)
{
    // slot 0 = [0, 1], slot 1 = [2, 3], slot 6 = [64, 127], slot 12 = [4096, 8191]
    std::vector<std::uint64_t> slots(13);
    slots[0] = 2;
    slots[6] = 3;
    slots[12] = 2;
    auto h = tpkit::expose_histogram(tpkit::Histogram::from_log2(slots), 1);
    ASSERT_EQ(h.buckets.size(), 64u); // 63 finite upper bounds, then +Inf for [2^63, 2^64-1]
    EXPECT_EQ(h.buckets[0], std::make_pair(1.0, std::uint64_t{2}));
    EXPECT_EQ(h.buckets[1], std::make_pair(3.0, std::uint64_t{2}));
    EXPECT_EQ(h.buckets[5], std::make_pair(63.0, std::uint64_t{2}));
    EXPECT_EQ(h.buckets[6], std::make_pair(127.0, std::uint64_t{5}));
    EXPECT_EQ(h.buckets[12], std::make_pair(8191.0, std::uint64_t{7}));
    EXPECT_TRUE(std::isinf(h.buckets.back().first));
    EXPECT_EQ(h.buckets.back().second, 7u);
    EXPECT_EQ(h.count, 7u);
    EXPECT_FALSE(h.sum);
}

TEST(Exposition, MicrosecondsBecomeExactSeconds)
{
    std::vector<std::uint64_t> slots(2);
    slots[1] = 1; // [2, 3] us
    auto h = tpkit::expose_histogram(tpkit::Histogram::from_log2(slots), 1e-6);
    tpkit::MetricFamily f{"tpkit_lat_seconds", "h", "seconds", MetricType::histogram, {}};
    f.series.push_back({{{"cpu", "0"}}, h});
    const std::string text = tpkit::render_exposition({f}, ExpositionFormat::prometheus);
    EXPECT_NE(text.find("tpkit_lat_seconds_bucket{cpu=\"0\",le=\"3e-06\"} 1\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("tpkit_lat_seconds_bucket{cpu=\"0\",le=\"+Inf\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("tpkit_lat_seconds_count{cpu=\"0\"} 1\n"), std::string::npos);
    EXPECT_EQ(text.find("_sum"), std::string::npos);
}

TEST(Exposition, LinearOverflowBucketIsInf)
{
    // below 0: none (min 0); [0,9], [10,19]; >= 20
    std::vector<std::uint64_t> slots{0, 1, 2, 4};
    auto h = tpkit::expose_histogram(
        tpkit::Histogram::from_linear(slots, tpkit::linear_range(0, 20, 10)), 1);
    ASSERT_EQ(h.buckets.size(), 3u);
    EXPECT_EQ(h.buckets[0], std::make_pair(9.0, std::uint64_t{1}));
    EXPECT_EQ(h.buckets[1], std::make_pair(19.0, std::uint64_t{3}));
    EXPECT_TRUE(std::isinf(h.buckets[2].first));
    EXPECT_EQ(h.buckets[2].second, 7u);
}

TEST(Exposition, AcceptHeaderChoosesTheFormat)
{
    EXPECT_EQ(tpkit::negotiate_exposition(""), ExpositionFormat::prometheus);
    EXPECT_EQ(tpkit::negotiate_exposition("text/plain;version=0.0.4;q=0.3,*/*;q=0.1"),
              ExpositionFormat::prometheus);
    EXPECT_EQ(tpkit::negotiate_exposition(
                  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
              ExpositionFormat::openmetrics);
}

TEST(Exposition, MetricNames)
{
    EXPECT_TRUE(tpkit::valid_metric_name("tpkit_runq_seconds"));
    EXPECT_TRUE(tpkit::valid_metric_name("_x9"));
    EXPECT_FALSE(tpkit::valid_metric_name(""));
    EXPECT_FALSE(tpkit::valid_metric_name("9x"));
    EXPECT_FALSE(tpkit::valid_metric_name("a-b"));
    EXPECT_FALSE(tpkit::valid_metric_name("a:b"));
}

// A byte that is not UTF-8 becomes its Latin-1 character (U+00XX), so that comms differing only
// in such bytes (x\xff, x\xfe) stay two series.
TEST(Exposition, LabelValuesAreValidUtf8AndStayDistinct)
{
    MetricFamily f{"tpkit_c", "h", "", MetricType::gauge, {}};
    f.series.push_back({{{"comm", "caf\xc3\xa9\xff!"}}, 1.0});
    f.series.push_back({{{"comm", "caf\xc3\xa9\xfe!"}}, 2.0});
    EXPECT_EQ(tpkit::render_exposition({f}, ExpositionFormat::prometheus),
              "# HELP tpkit_c h\n# TYPE tpkit_c gauge\n"
              "tpkit_c{comm=\"caf\xc3\xa9\xc3\xbf!\"} 1\n"
              "tpkit_c{comm=\"caf\xc3\xa9\xc3\xbe!\"} 2\n");
}
