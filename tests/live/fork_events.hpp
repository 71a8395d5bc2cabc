// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Fork events among a tool's --json lines, whichever tool printed them: forksnoop's flat
// objects, tpsnoop's with the event's fields under "fields".
#pragma once

#include "tool_run.hpp"

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tpkit::live {

// The parent_pid of a fork event line ("" for any other line).
inline std::string fork_parent(const std::string& line)
{
    auto obj = parse_flat_json(line);
    if (obj.contains("fields"))
        obj = parse_flat_json(obj["fields"]);
    return obj["parent_pid"];
}

// How many fork events `forker` made among `lines`.
inline std::size_t forks_of(const std::vector<std::string>& lines, pid_t forker)
{
    std::size_t forks = 0;
    for (const auto& line : lines)
        forks += fork_parent(line) == std::to_string(forker);
    return forks;
}

// Marker forks by a process named `comm` until the tool shows one: it is attached, reading,
// and (the streaming tools) past dropping its capabilities.
inline bool shows_a_fork(ToolRun& tool, const std::string& comm)
{
    pid_t forker = -1;
    return poke_until_line(
        tool, [&] { forker = run_marker_fork(comm).forker; },
        [&](const std::string& line) { return fork_parent(line) == std::to_string(forker); },
        poke_attempts, poke_wait);
}

} // namespace tpkit::live
