// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// wqlat's collector: its options and how it opens.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::wqlat {

// Work functions the histogram map holds per interval.
inline constexpr std::uint32_t max_functions = 4096;

struct Options {
    bool milliseconds = false;
    std::string function;
};

// -m, -w.
void add_options(Cli& cli, Options& options);
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::wqlat
