// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// netrxlen against real packets: UDP datagrams of chosen sizes on the loopback device of a
// private network namespace land in exactly the expected log2 buckets.
#include "live.hpp"
#include "private_netns.hpp"
#include "tool_run.hpp"

#include <signal.h>

#include <map>

namespace {

constexpr std::size_t marker_payload = 1200; // lands in [1024, 2047], kept apart from the test
constexpr std::uint64_t marker_bucket = 1024;

// The datagrams the test sends: their IP lengths (payload + 28) in the buckets.
const std::vector<tpkit::live::Datagrams> rx_sent{
    {.payload = 10, .count = 7, .bucket = 32},    // 38 bytes
    {.payload = 32, .count = 5, .bucket = 32},    // 60
    {.payload = 100, .count = 11, .bucket = 128}, // 128
    {.payload = 172, .count = 3, .bucket = 128},  // 200
    {.payload = 300, .count = 13, .bucket = 256}, // 328
};

void expect_exact_histogram(const std::vector<std::string>& extra_args, const std::string& key)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::PrivateNetns ns;
    auto tool = ns.start_histogram_tool("netrxlen", extra_args, marker_payload, marker_bucket);
    ASSERT_TRUE(tool);

    const auto expected = ns.send_datagrams(rx_sent);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();

    auto counts = tpkit::live::histogram_buckets(tool->lines(), key);
    counts.erase(marker_bucket);
    EXPECT_EQ(counts, expected);
}

} // namespace

TEST(NetrxlenExact, ExactBucketsAtNetifReceiveSkb) { expect_exact_histogram({"--dev", "lo"}, ""); }

TEST(NetrxlenExact, ExactBucketsAtNetifRx)
{
    expect_exact_histogram({"--dev", "lo", "--event", "netif_rx"}, "");
}

TEST(NetrxlenExact, PerDeviceHistogramIsKeyedByName)
{
    expect_exact_histogram({"--dev", "lo", "--per-dev"}, "lo");
}
