// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpcount's collector: counts of any tracepoints' events, in total or by a key; for its main and
// for the exporter.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tpkit::tpcount {

struct Options {
    std::vector<std::string> events;
    std::string by;
    std::vector<std::string> filters; // --filter, each for every event or SYSTEM:EVENT=EXPR
    std::size_t top = 0;
    std::uint32_t max_keys = 10240;
    std::uint32_t stack_storage = 16384;
    bool classic = false;
};

// Plans the events (globs, --filter, --by), then loads and attaches the engine's instances
// (plan_instances), all sharing their maps. Each collect gives the counts since the previous
// one, largest first.
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::tpcount
