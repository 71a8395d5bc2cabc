// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// futexctn's collector: its options and how it opens.
#pragma once

#include <tpkit/tools/futexctn.h>

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>

namespace tpkit::futexctn {

// Keys (futex word, thread or process, stack) the histogram map holds per interval.
inline constexpr std::uint32_t max_keys = 10240;

struct Options {
    bool milliseconds = false;
    bool summary = false;      // -s: by process, without stacks
    std::uint64_t lock = 0;    // -l: this futex word only (0: every one)
    std::uint32_t stack_storage = 1024;
    std::uint32_t stack_depth = FUTEXCTN_MAX_STACK_DEPTH;
};

// -m, -s, -l, --stack-storage-size, --perf-max-stack-depth.
void add_options(Cli& cli, Options& options);
// Each collect gives one histogram of the time waited per futex word and thread (process with
// -s) and user stack, symbolized.
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::futexctn
