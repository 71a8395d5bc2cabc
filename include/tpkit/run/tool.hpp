// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Running a tool: its body with errors as one line and an exit code (run_tool), the stop by
// signal or --duration (StopSignal), and the loop of streaming tools (aggregating tools':
// collector.hpp).
#pragma once

#include "tpkit/bpf/maps.hpp"
#include "tpkit/cli/cli.hpp"
#include "tpkit/output/output.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace tpkit {

// Runs a tool's body: tpkit::Error → "NAME: message" on stderr and its exit code; any other
// exception → exit 1. Writes what is left of standard_output() at the end, says on stderr how
// many lines could not be written, and makes a closed stdout (EPIPE) a quiet exit 0.
int run_tool(std::string_view name, const std::function<void()>& body);

// SIGINT, SIGTERM, SIGHUP and --duration: stop the tool's loop, which then prints its final output.
// Made as tracing begins: on a terminal, it first says so on stderr in one line ("Tracing
// sched:sched_process_fork… Ctrl-C to end."); a pipe or file gets no such line.
class StopSignal {
public:
    explicit StopSignal(double duration_seconds);
    // A tool's: --duration, and "ready" on --ready-fd (the tool made it once every event is
    // attached and counted).
    explicit StopSignal(const CommonOptions& options);

    // Waits at most `timeout`, writing standard_output() as its reader takes it meanwhile; true
    // when it is time to stop (signal or deadline).
    bool wait(std::chrono::milliseconds timeout);
    // Non-blocking check.
    bool stop_requested() { return wait(std::chrono::milliseconds(0)); }

private:
    bool stopped_ = false;
    std::optional<std::chrono::steady_clock::time_point> deadline_;
};

class EventReader;

// The loop of streaming tools: delivers events until a stop, then what is left in the buffer.
// While stdout's reader lags, events wait in the kernel's buffer (dropped and counted there when
// it is full) rather than piling up in memory.
void run_stream(EventReader& reader, StopSignal& stop);

// At exit of a streaming tool: events lost go to stderr when there were any, each cause in a
// line of its own — `buffer_full` records the buffer could not take, and the runs of the tool's
// programs the kernel skipped (program_stats.hpp) — and with --json a last line
// {"type":"lost","lost_events":N,…} is always written (lost_json()), so consumers can tell none
// were lost. Then stdout ends (Output::end), before the tool detaches.
void report_lost(std::string_view tool, std::uint64_t buffer_full, bool json);

} // namespace tpkit
