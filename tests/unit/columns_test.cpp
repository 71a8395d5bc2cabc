// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Streaming columns: the header, a text row and a JSON object rendered from one declaration;
// durations in seconds or milliseconds in text, exact nanoseconds in JSON.
#include "tpkit/process/clock.hpp"
#include "tpkit/run/columns.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

struct Stall {
    std::uint64_t age_ns;
    std::uint64_t latency_ns;
    std::uint32_t pages;
};

const tpkit::Columns<Stall> columns{{
    tpkit::seconds_column<Stall>("AGE(s)", "age_ns", 7, [](const Stall& s) -> tpkit::Value { return s.age_ns; }),
    {"LAT(ms)", "latency_ns", 8, tpkit::Align::right,
     [](const Stall& s) { return tpkit::milliseconds_value(s.latency_ns, 3); }},
    {"PAGES", "pages", 5, tpkit::Align::right, [](const Stall& s) -> tpkit::Value { return s.pages; }},
    tpkit::json_column<Stall>("free_kb", [](const Stall&) -> tpkit::Value { return tpkit::absent; }),
}};

std::string render(const Stall& s, bool json)
{
    tpkit::CommonOptions options;
    options.json = json;
    tpkit::MonotonicClock clock;
    tpkit::Output out(-1); // never written: the text stays in its buffer
    columns.header(options, out);
    columns.row(s, options, clock, out);
    return out.buffer();
}

} // namespace

TEST(StreamColumns, DurationsInTextRoundedAndInJsonExact)
{
    const Stall s{1'234'567'891, 2'345'678, 17};
    EXPECT_EQ(render(s, false), " AGE(s)  LAT(ms) PAGES\n"
                                "   1.23    2.346    17\n");
    EXPECT_EQ(render(s, true),
              "{\"type\":\"event\",\"age_ns\":1234567891,\"latency_ns\":2345678,\"pages\":17,\"free_kb\":null}\n");
}
