// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Whether BPF programs run at all while a given thread is current. On the machines this project
// is tested on, the threads of one process (a system process of the machine, PID 1) are never
// seen by any BPF program, classic or raw: their context switches, and the events that
// interrupts raise while they run, reach ftrace but no program, and the kernel counts no skipped
// run. A test comparing a tool with the kernel's trace can excuse an event only of such a
// thread, checked here, never on trust.
#pragma once

#include <sys/types.h>

#include <optional>

namespace tpkit::live {

// Judged on the thread's whole process (its threads share the fate; more switches to go by),
// once per process and test run. true: a BPF program saw one of its threads switch away; false:
// /proc says they switched while a raw sched_switch program, running in their context, counted
// none; nothing: they did not switch within a patient 10 s, or the thread is gone.
std::optional<bool> bpf_sees_thread(pid_t tid);

} // namespace tpkit::live
