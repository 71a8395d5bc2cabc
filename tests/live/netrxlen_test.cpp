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

void expect_exact_histogram(const std::vector<std::string>& extra_args, const std::string& key)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::live::PrivateNetns ns;
    auto tool = ns.start_histogram_tool("netrxlen", extra_args, marker_payload, 1024);
    ASSERT_TRUE(tool);

    // IP lengths 38, 60, 128, 200, 328: buckets [32,63] x(7+5), [128,255] x(11+3), [256,511] x13
    ns.send_datagrams(10, 7);
    ns.send_datagrams(32, 5);
    ns.send_datagrams(100, 11);
    ns.send_datagrams(172, 3);
    ns.send_datagrams(300, 13);
    ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();

    auto counts = tpkit::live::histogram_buckets(tool->lines(), key);
    counts.erase(1024); // the markers
    std::map<std::uint64_t, std::uint64_t> expected{{32, 12}, {128, 14}, {256, 13}};
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
