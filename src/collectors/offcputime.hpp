// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offcputime's collector: its options and how it opens. Its output is stacks, not a Reading: a
// Reading's labels are single strings, and a stack is a list of frames (an array in JSON, a
// folded line for flame graphs).
#pragma once

#include <tpkit/tools/offcputime.h>

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>
#include <optional>

namespace tpkit::offcputime {

struct Options {
    bool user_threads = false, kernel_threads = false;
    bool user_stacks_only = false, kernel_stacks_only = false;
    bool folded = false, offsets = false;
    std::uint64_t min_us = 1, max_us = UINT64_MAX;
    std::optional<std::uint32_t> state;
    std::optional<double> duration; // bcc's positional [duration]
    std::uint32_t stack_storage = 16384;
    std::uint32_t stack_depth = OFFCPUTIME_MAX_STACK_DEPTH;
};

// Its options, the positional [duration] last.
void add_options(Cli& cli, Options& options);
// Each print writes the time threads spent blocked, by thread and stack, symbolized, the longest
// last: as bcc's blocks of frames, folded (-f) or JSON lines.
std::unique_ptr<tpkit::Collector> open(const Cli& cli, const Options& options);

} // namespace tpkit::offcputime
