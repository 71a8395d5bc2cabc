// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The BPF kit's histogram adds (bpf/include/tpkit/hist.bpf.h), run as plain C: each value lands
// in its slot, and the atomic adds lose nothing when threads add to one slot at once.
#include "../../bpf/include/tpkit/hist.bpf.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

namespace {

constexpr std::uint64_t all_ones = std::numeric_limits<std::uint64_t>::max();

template <class Hist>
std::uint64_t total(const Hist& h)
{
    return std::accumulate(std::begin(h.slots), std::end(h.slots), std::uint64_t{0});
}

} // namespace

TEST(HistAdd, Log2ValuesLandInTheirSlot)
{
    tpkit_log2_hist h{};
    for (std::uint64_t v : std::vector<std::uint64_t>{0, 1, 2, 3, 1000, 1023, 1024, all_ones})
        tpkit_log2_hist_add(&h, v);
    tpkit_log2_hist_add_atomic(&h, 1024);
    EXPECT_EQ(h.slots[0], 2u);
    EXPECT_EQ(h.slots[1], 2u);
    EXPECT_EQ(h.slots[9], 2u);
    EXPECT_EQ(h.slots[10], 2u);
    EXPECT_EQ(h.slots[63], 1u);
    EXPECT_EQ(total(h), 9u);
}

TEST(HistAdd, LogLinearAndLinearUseTheSlotFunctions)
{
    auto loglinear = std::make_unique<tpkit_loglinear_hist>();
    tpkit_loglinear_hist_add(loglinear.get(), 10, 2);         // slot 9 (see HistSlots)
    tpkit_loglinear_hist_add_atomic(loglinear.get(), 11, 2);  // slot 9
    tpkit_loglinear_hist_add(loglinear.get(), all_ones, 4);    // the last slot
    EXPECT_EQ(loglinear->slots[9], 2u);
    EXPECT_EQ(loglinear->slots[TPKIT_LOGLINEAR_SLOTS - 1], 1u);
    EXPECT_EQ(total(*loglinear), 3u);

    auto linear = std::make_unique<tpkit_linear_hist>();
    tpkit_linear_hist_add(linear.get(), 99, 100, 200, 10);         // below min: slot 0
    tpkit_linear_hist_add(linear.get(), 115, 100, 200, 10);        // [110, 119]: slot 2
    tpkit_linear_hist_add_atomic(linear.get(), 200, 100, 200, 10); // at max: slot 11
    EXPECT_EQ(linear->slots[0], 1u);
    EXPECT_EQ(linear->slots[2], 1u);
    EXPECT_EQ(linear->slots[11], 1u);
    EXPECT_EQ(total(*linear), 3u);
}

TEST(HistAdd, AtomicAddsFromManyThreadsAreAllCounted)
{
    constexpr int threads = 8, adds = 200000;
    tpkit_log2_hist h{};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; t++)
        workers.emplace_back([&] {
            for (int i = 0; i < adds; i++)
                tpkit_log2_hist_add_atomic(&h, 5);
        });
    for (auto& w : workers)
        w.join();
    EXPECT_EQ(h.slots[2], std::uint64_t{threads} * adds);
    EXPECT_EQ(total(h), std::uint64_t{threads} * adds);
}
