// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tplat's collector: the time from one tracepoint to another of the same thread, or of the same
// value of a field of each, as in-kernel histograms; for its main and for the exporter.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::tplat {

struct Options {
    std::string start;
    std::string end;
    std::string match; // empty: the same thread
    std::string start_filter;
    std::string end_filter;
    std::string by;
    std::string unit = "us";
    std::string linear;
    unsigned loglinear = 0;
    std::uint32_t max_keys = 1024;
    std::uint32_t max_pending = 10240;
};

// START, END and tplat's own options (not the common ones, nor [interval] [count]).
void add_options(Cli& cli, Options& options);

// Plans both events (their filters, --match, --by, the buckets), then loads and attaches an
// instance of the engine for each. Each collect gives the histograms since the previous one.
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::tplat
