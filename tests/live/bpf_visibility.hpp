// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Whether BPF programs run at all while a given thread is current. On the machines this project
// is tested on, one task (a system process of the machine) is never seen by any BPF program, classic or
// raw: its context switches, and the events that interrupts raise while it runs, reach ftrace
// but no program, and the kernel counts no skipped run. A test comparing a tool with the
// kernel's trace can excuse an event only of such a thread, checked here, never on trust.
#pragma once

#include <sys/types.h>

#include <optional>

namespace tpkit::live {

// true: a BPF program saw the thread switch away; false: /proc says it switched while a raw
// sched_switch program, running in its context, counted none; nothing: it did not switch
// within a few seconds, or is gone.
std::optional<bool> bpf_sees_thread(pid_t tid);

} // namespace tpkit::live
