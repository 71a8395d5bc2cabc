// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A workload of syscalls made on request by one child, and a marker child that calls getppid:
// the handshake that the tool under test is attached and its output read, kept apart so that no
// part of it can fall into the counted rounds. The tool must trace getppid (its sys_enter or
// sys_exit) for the same comm.
#pragma once

#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>

namespace tpkit::live {

struct MarkedWorkload {
    // act: one round, raw syscalls only (it runs in a forked child); 0 when each call gave what
    // it should.
    MarkedWorkload(const std::string& comm, const std::function<int()>& act)
        : marker{comm, nullptr, [] { return static_cast<int>(syscall(SYS_getppid) < 0); },
                 ScriptedChild::Acts::on_request},
          caller{comm, nullptr, act, ScriptedChild::Acts::on_request}
    {
    }

    ScriptedChild marker;
    ScriptedChild caller;

    // Pokes the marker until TOOL shows a getppid line: attached, and its output read.
    void until_seen_by(ToolRun& tool)
    {
        EXPECT_TRUE(poke_until_line(
            tool, [&] { marker.act_once(); },
            [](const std::string& l) { return l.find("getppid") != std::string::npos; },
            poke_attempts, poke_wait))
            << tool.stderr_text();
    }

    // ROUNDS of the caller's act, then SIGINT to TOOL: the index of its first line that can hold
    // them.
    std::size_t rounds_then_stop(ToolRun& tool, int rounds)
    {
        auto before = tool.lines().size();
        for (int i = 0; i < rounds; i++)
            EXPECT_EQ(caller.act_once(), 0);
        EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
        return before;
    }
};

} // namespace tpkit::live
