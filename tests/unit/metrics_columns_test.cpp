// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Counter tables: one row per set of labels, COUNT by default, or several value columns (a
// count, a total time and an average, as syscount -L prints them) in text and JSON alike.
#include "tpkit/output/metrics.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

std::string text_of(const tpkit::Reading& reading)
{
    tpkit::Output out(-1); // never written: the text stays in its buffer
    tpkit::render_text(reading, out);
    return out.buffer();
}

std::string json_of(const tpkit::Reading& reading)
{
    tpkit::Output out(-1);
    tpkit::render_json(reading, out, 1700000000123456789);
    return out.buffer();
}

tpkit::Reading syscall_times()
{
    tpkit::Reading r;
    r.counter_labels = {"syscall"};
    r.counter_columns = {{"COUNT", "count", 1, 0, ""},
                         {"TIME (us)", "time", 1000, 3, ""},
                         {"AVG (us)", "time", 1000, 3, "count"}};
    std::vector<tpkit::Label> read{{"syscall", "read", false}}, close{{"syscall", "close", false}};
    r.metrics = {{"count", "", "", read, std::uint64_t(3)},
                 {"time", "", "ns", read, std::uint64_t(1'234'567)},
                 {"count", "", "", close, std::uint64_t(2)},
                 {"time", "", "ns", close, std::uint64_t(1'001)}};
    return r;
}

} // namespace

TEST(MetricsColumns, CountByDefault)
{
    tpkit::Reading r;
    r.counter_labels = {"syscall"};
    r.metrics = {{"count", "", "", {{"syscall", "getppid", false}}, std::uint64_t(7)}};
    EXPECT_EQ(text_of(r), "SYSCALL        COUNT\n"
                          "getppid            7\n\n");
    EXPECT_EQ(json_of(r),
              "{\"type\":\"count\",\"time_ns\":1700000000123456789,\"syscall\":\"getppid\",\"count\":7}\n");
}

TEST(MetricsColumns, SeveralValuesPerRowExactToTheNanosecond)
{
    auto r = syscall_times();
    EXPECT_EQ(text_of(r), "SYSCALL        COUNT    TIME (us)     AVG (us)\n"
                          "read               3     1234.567      411.522\n"
                          "close              2        1.001        0.501\n\n");
    EXPECT_EQ(json_of(r), "{\"type\":\"count\",\"time_ns\":1700000000123456789,\"syscall\":\"read\","
                          "\"count\":3,\"time_us\":1234.567,\"avg_us\":411.522}\n"
                          "{\"type\":\"count\",\"time_ns\":1700000000123456789,\"syscall\":\"close\","
                          "\"count\":2,\"time_us\":1.001,\"avg_us\":0.501}\n");
}

TEST(MetricsColumns, MillisecondsRound)
{
    auto r = syscall_times();
    r.counter_columns[1] = {"TIME (ms)", "time", 1'000'000, 3, ""};
    EXPECT_EQ(text_of(r), "SYSCALL        COUNT    TIME (ms)     AVG (us)\n"
                          "read               3        1.235      411.522\n"
                          "close              2        0.001        0.501\n\n");
}

TEST(MetricsColumns, UncountedEventsAreALostLine)
{
    tpkit::Reading r;
    r.counter_labels = {"syscall"};
    r.metrics = {{"count", "", "", {{"syscall", "getppid", false}}, std::uint64_t(7)}};
    r.uncounted = 3;
    EXPECT_EQ(json_of(r),
              "{\"type\":\"count\",\"time_ns\":1700000000123456789,\"syscall\":\"getppid\",\"count\":7}\n"
              "{\"type\":\"lost\",\"time_ns\":1700000000123456789,\"lost_events\":3,\"not_counted\":3}\n");
    EXPECT_EQ(text_of(r), "SYSCALL        COUNT\n"
                          "getppid            7\n\n"); // said on stderr by the tool
}

TEST(MetricsColumns, ALostLineHasItsTotalThenEachCauseThatIsNotZero)
{
    EXPECT_EQ(tpkit::lost_json({}), "{\"type\":\"lost\",\"lost_events\":0}");
    EXPECT_EQ(tpkit::lost_json({.buffer_full = 2, .recursion = 5}),
              "{\"type\":\"lost\",\"lost_events\":7,\"buffer_full\":2,\"recursion\":5}");
    EXPECT_EQ(tpkit::lost_json({.not_counted = 1}, 42),
              "{\"type\":\"lost\",\"time_ns\":42,\"lost_events\":1,\"not_counted\":1}");
}

TEST(MetricsColumns, ALabelNamedAsAColumnIsKeyName)
{
    tpkit::Reading r;
    r.counter_labels = {"event", "count"};
    r.metrics = {{"count", "", "", {{"event", "a:b"}, {"count", "12", true}}, std::uint64_t(2)}};
    EXPECT_EQ(json_of(r), "{\"type\":\"count\",\"time_ns\":1700000000123456789,\"event\":\"a:b\","
                          "\"key_count\":12,\"count\":2}\n");
}
