// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tphist's collector: an in-kernel histogram of one integer field of any tracepoint; for its main
// and for the exporter. Its bucket options are tplat's too.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace tpkit::tphist {

struct Options {
    std::string event;
    std::string field; // FIELD, FIELD*N or FIELD/N
    std::string unit;  // --unit ns|us|ms of a field in nanoseconds; empty: the field's own
    std::string linear;
    unsigned loglinear = 0;
    std::string by;
    std::string filter;
    std::uint32_t max_keys = 1024;
    std::uint32_t stack_storage = 16384;
    bool classic = false;
};

// "MIN,MAX,STEP"
LinearRange parse_linear(const std::string& text);

// --linear MIN,MAX,STEP and --loglinear K, one or the other; `linear_description` says what
// MIN, MAX and STEP are in.
void add_bucket_options(Cli& cli, std::string& linear, unsigned& loglinear,
                        const std::string& linear_description);

// The bucket layout of --linear MIN,MAX,STEP or --loglinear K (log2 when neither) into config.
void configure_buckets(tpkit_engine_config& config, const std::string& linear, unsigned loglinear);

// Plans the event (its field, --by, --filter, the buckets), then loads and attaches. Each collect
// gives the histograms since the previous one.
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::tphist
