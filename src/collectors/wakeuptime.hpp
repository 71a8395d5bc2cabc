// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// wakeuptime's collector: its options and how it opens. Its output is stacks, as offcputime's:
// bcc's blocks of frames, folded lines or JSON with the stack as an array.
#pragma once

#include <tpkit/tools/wakeuptime.h>

#include <tpkit/cli/cli.hpp>
#include <tpkit/run/collector.hpp>

#include <cstdint>
#include <memory>
#include <optional>

namespace tpkit::wakeuptime {

struct Options {
    bool user_threads = false;
    bool folded = false, offsets = false;
    std::uint64_t min_us = 1, max_us = UINT64_MAX;
    std::optional<double> duration; // bcc's positional [duration]
    std::uint32_t stack_storage = 16384;
    std::uint32_t stack_depth = WAKEUPTIME_MAX_STACK_DEPTH;
};

// Its options, the positional [duration] last.
void add_options(Cli& cli, Options& options);
// Each print writes the time threads spent blocked, by waker, the waker's kernel stack and the
// woken thread's comm, the longest last.
std::unique_ptr<tpkit::Collector> open(const Cli& cli, const Options& options);

} // namespace tpkit::wakeuptime
