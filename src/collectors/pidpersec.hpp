// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// pidpersec's collector: how it opens, for its main.
#pragma once

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <memory>

namespace tpkit::pidpersec {

// bcc's pidpersec has no options of its own.
struct Options {};

void add_options(Cli& cli, Options& options);
// Each print is the new tasks since the previous one: in text bcc's line "HH:MM:SS: PIDs/sec:
// N", in JSON a count line with the processes and threads among them.
std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options);

} // namespace tpkit::pidpersec
