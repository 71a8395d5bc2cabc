// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Locating (and, as root, mounting) tracefs.
#pragma once

#include "tpkit/support/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace tpkit {

// The tracefs root: /sys/kernel/tracing, else /sys/kernel/debug/tracing. When neither is
// mounted and we are root, mounts tracefs at /sys/kernel/tracing and says so once on stderr.
// Throws Error(no_privileges) when tracefs cannot be reached or its events/ cannot be read
// (tracefs is usually root's only: mode 0700). The result is cached.
const std::filesystem::path& tracefs_root();

// A tracepoint named "system:event" (or "system/event"), split.
struct TracepointName {
    std::string system;
    std::string event;
    std::string str() const { return system + ":" + event; }
};

// Parses "sys:event"; throws Error(usage) on a malformed name.
TracepointName parse_tracepoint_name(std::string_view text);

// tracefs_root()/events/<sys>/<event>; throws unknown_tracepoint(name) when it does not exist.
std::filesystem::path event_dir(const TracepointName& name);

// Error(unknown_target) "unknown tracepoint 'SYS:EVENT'", with this kernel's nearest event when
// one is near enough to be a misspelling: "… (did you mean sched:sched_switch?)".
Error unknown_tracepoint(const TracepointName& name);

// Whether this kernel has the event: syscalls differ between architectures (x86-64 has open(),
// arm64 only openat()) and kernel versions.
bool event_exists(const TracepointName& name);

// For a tool that needs the event: throws Error(unknown_target) "this kernel has no SYS:EVENT
// tracepoint (WHICH)" when it is missing, `which` saying which kernels have it.
void require_event(const TracepointName& name, std::string_view which);

// require_event() for syscalls:sys_enter_SYSCALL and sys_exit_SYSCALL, which kernels built
// without CONFIG_FTRACE_SYSCALLS lack.
void require_syscall_events(std::string_view syscall);

// Whether the kernel attaches BPF programs to the event: not to ftrace:* events, the tracers'
// own records (perf_event_open or the attach fails with EINVAL or EPERM).
bool attaches_bpf(const TracepointName& name);

} // namespace tpkit
