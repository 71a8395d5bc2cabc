// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A histogram split by several key labels (runqlat -P: a pid and its comm) is headed by all of
// them, as bcc's tools print it, and keyed by all of them in JSON.
#include "tpkit/output/metrics.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

tpkit::Reading reading_with_labels(std::vector<tpkit::Label> keys)
{
    std::vector<std::uint64_t> slots(8, 0);
    slots[3] = 2; // two values in [8, 15]
    std::vector<tpkit::Label> labels{{"event", "sched:sched_switch"}};
    labels.insert(labels.end(), keys.begin(), keys.end());
    tpkit::Reading reading;
    reading.metrics.push_back(
        {"usecs", "run-queue latency", "usecs", labels, tpkit::Histogram::from_log2(slots)});
    return reading;
}

// What a render writes, through an Output whose fd is never written to.
template <class Render>
std::string rendered(const tpkit::Reading& reading, Render render)
{
    tpkit::Output out(-1);
    render(reading, out);
    return out.buffer();
}

} // namespace

TEST(MetricsLabels, KeysAfterTheFirstFollowItsValue)
{
    auto reading = reading_with_labels({{"pid", "181", true}, {"comm", "bash"}});
    std::string text = rendered(reading, [](const auto& r, auto& out) { tpkit::render_text(r, out); });
    EXPECT_EQ(text.substr(0, text.find('\n')), "pid = 181 bash");
    std::string json =
        rendered(reading, [](const auto& r, auto& out) { tpkit::render_json(r, out, 42); });
    EXPECT_EQ(json, R"({"type":"hist","time_ns":42,"event":"sched:sched_switch","field":"usecs",)"
                    R"("unit":"usecs","pid":181,"comm":"bash","key":"181 bash",)"
                    R"("buckets":[{"low":8,"high":15,"count":2}],"total":2,"p50":{"low":8,"high":15},)"
                    R"("p90":{"low":8,"high":15},"p99":{"low":8,"high":15}})"
                    "\n");
}

TEST(MetricsLabels, ANumberLabelThatIsNoNumberStaysText)
{
    auto reading = reading_with_labels({{"cpu", "?", true}});
    std::string json =
        rendered(reading, [](const auto& r, auto& out) { tpkit::render_json(r, out, 42); });
    EXPECT_NE(json.find(R"("cpu":"?","key":"?")"), std::string::npos) << json;
}

TEST(MetricsLabels, OneKeyIsItsValue)
{
    auto reading = reading_with_labels({{"dev", "lo"}});
    std::string text = rendered(reading, [](const auto& r, auto& out) { tpkit::render_text(r, out); });
    EXPECT_EQ(text.substr(0, text.find('\n')), "dev = lo");
}
