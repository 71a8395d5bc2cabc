// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The signals that stop a tool (SIGINT, SIGTERM, SIGHUP), blocked from the start and read
// from a signalfd where the tool waits.
#pragma once

namespace tpkit {

// A signalfd for SIGINT, SIGTERM and SIGHUP, which stay blocked from run_tool() on: they are
// taken only where a tool waits, so a signal during load still ends in detach and final output.
int stop_signal_fd();

// For a service that takes SIGHUP as "reload its configuration": SIGHUP stops nothing from
// then on, and is read from the signalfd returned. Call before run_tool().
int reload_signal_fd();

// Whether a stop signal is pending (not taken: the loop's StopSignal takes it), for steps
// long enough to be worth cutting short, such as attaching many events.
bool stop_pending();

} // namespace tpkit
