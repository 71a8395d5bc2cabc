// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// numamove's collector: how it opens, for its main.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <memory>

namespace tpkit::numamove {

struct Options {
    bool all_reasons = false; // a table of every reason each second, not bcc's NUMA line alone
};

void add_options(Cli& cli, Options& options);
// Each print is the migrations since the previous one: in text libbpf-tools' line (the NUMA
// reason's migrations and their milliseconds) or, with --all-reasons, a table of every reason
// that migrated; in JSON a count line per reason that migrated, the NUMA reason's always.
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::numamove
