// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/bpf/maps.hpp"

#include "tpkit/engine.h"
#include "tpkit/hist.h"

#include <gtest/gtest.h>

TEST(MapMemory, PerCpuHashCountsEveryPossibleCpu)
{
    // What the adversarial run saw: --by pid --max-keys 1048576 --loglinear 4 on 2 CPUs asked
    // the kernel for ~16 GB (16.1 MB per 1,024 keys).
    const std::uint64_t bytes =
        tpkit::map_memory_bytes(BPF_MAP_TYPE_PERCPU_HASH, 1u << 20, sizeof(tpkit_engine_key),
                                sizeof(tpkit_loglinear_hist), 2);
    EXPECT_EQ(bytes, (std::uint64_t(1) << 20) * (48 + 120 + 8 + 7808 * 2));
    EXPECT_GT(bytes, 16'000'000'000u);
    // Twice the CPUs, nearly twice the memory: values are per CPU, keys are not.
    EXPECT_EQ(tpkit::map_memory_bytes(BPF_MAP_TYPE_PERCPU_HASH, 1, 80, 7808, 4),
              48 + 80 + 8 + 7808 * 4u);
}

TEST(MapMemory, OtherTypes)
{
    EXPECT_EQ(tpkit::map_memory_bytes(BPF_MAP_TYPE_HASH, 10, 4, 12, 8), 10u * (48 + 8 + 16));
    EXPECT_EQ(tpkit::map_memory_bytes(BPF_MAP_TYPE_PERCPU_ARRAY, 3, 4, 8, 2), 3u * 8 * 2);
    EXPECT_EQ(tpkit::map_memory_bytes(BPF_MAP_TYPE_RINGBUF, 4u << 20, 0, 0, 2), 4u << 20);
    EXPECT_EQ(tpkit::map_memory_bytes(BPF_MAP_TYPE_ARRAY, 1, 4, 1, 2), 8u + 8);
}

TEST(MapMemory, FormatBytes)
{
    EXPECT_EQ(tpkit::format_bytes(512), "512 bytes");
    EXPECT_EQ(tpkit::format_bytes(16u << 20), "16.0 MiB");
    EXPECT_EQ(tpkit::format_bytes(std::uint64_t(15) << 30 | std::uint64_t(400) << 20), "15.4 GiB");
}
