// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// nettxlen against real packets: UDP datagrams of chosen sizes sent on the loopback device of a
// private network namespace land in exactly the expected log2 buckets. A transmitted length
// counts the link-layer header the receive side has already pulled: loopback's 14-byte Ethernet
// header on top of the 28 bytes of IPv4 and UDP headers. The sizes sit on bucket edges (63|64,
// 127|128), so a length off by one header lands in the wrong bucket.
#include "live.hpp"
#include "private_netns.hpp"
#include "tool_run.hpp"

#include <signal.h>

#include <map>

namespace {

constexpr std::size_t headers = 14 + 20 + 8; // Ethernet, IPv4, UDP
constexpr std::size_t tx_marker_payload = 1200; // 1242 bytes: [1024, 2047], apart from the test's
constexpr std::uint64_t tx_marker_bucket = 1024;

// The datagrams the test sends: a packet's length, headers included, less the headers is the
// payload; the length is in the bucket.
const std::vector<tpkit::live::Datagrams> tx_sent{
    {.payload = 63 - headers, .count = 7, .bucket = 32},
    {.payload = 64 - headers, .count = 5, .bucket = 64},
    {.payload = 127 - headers, .count = 11, .bucket = 64},
    {.payload = 128 - headers, .count = 3, .bucket = 128},
    {.payload = 342 - headers, .count = 13, .bucket = 256},
};

void expect_exact_tx_histogram(const std::vector<std::string>& extra_args, const std::string& key)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::PrivateNetns ns;
    auto tool = ns.start_histogram_tool("nettxlen", extra_args, tx_marker_payload, tx_marker_bucket);
    ASSERT_TRUE(tool);

    const auto expected = ns.send_datagrams(tx_sent);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();

    auto counts = tpkit::live::histogram_buckets(tool->lines(), key);
    counts.erase(tx_marker_bucket);
    EXPECT_EQ(counts, expected);
}

} // namespace

TEST(NettxlenExact, ExactBucketsOnLoopback) { expect_exact_tx_histogram({"--dev", "lo"}, ""); }

TEST(NettxlenExact, PerDeviceHistogramIsKeyedByName)
{
    expect_exact_tx_histogram({"--dev", "lo", "--per-dev"}, "lo");
}

// Loopback takes every packet: all under return code 0 (NETDEV_TX_OK).
TEST(NettxlenExact, PerReturnCodeHistogramIsKeyedByCode)
{
    expect_exact_tx_histogram({"--dev", "lo", "--per-dev", "--per-rc"}, "lo 0");
}
