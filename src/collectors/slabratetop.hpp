// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// slabratetop's collector: its options and how it opens.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::slabratetop {

// Caches (by name) the map holds in an interval: a kernel has a few hundred.
inline constexpr std::uint32_t max_keys = 10240;

struct Options {
    bool no_clear = false;
    std::size_t rows = 20;
    std::string sort = "size";
};

// -C, -r, -s.
void add_options(Cli& cli, Options& options);
// Each print is a table of the caches allocated from the most since the previous one, in text
// headed by bcc's line of the time and load average (after clearing the screen, on a terminal,
// unless -C).
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::slabratetop
