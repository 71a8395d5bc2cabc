// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The runners of one-purpose tools: what every tool does around its own BPF program — the task
// filters into rodata, transport, load, attach, the loop, the final report — written once.
// A streaming tool's main states its options, its columns and which programs to load:
//
//   tpkit::run_stream<forksnoop_bpf, forksnoop_event>(cli, columns, [&](forksnoop_bpf& skel) {
//       bpf_program__set_autoload(skel.progs.fork_raw_tp, raw);
//   });
#pragma once

#include "tpkit/bpf/skeleton.hpp"
#include "tpkit/bpf/transport.hpp"
#include "tpkit/cli/cli.hpp"
#include "tpkit/limits.h"
#include "tpkit/output/output.hpp"
#include "tpkit/process/clock.hpp"
#include "tpkit/process/privileges.hpp"
#include "tpkit/run/columns.hpp"
#include "tpkit/run/tool.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>

namespace tpkit {

// Where cgroup v2 is mounted ("" when nowhere).
std::string cgroup2_mount();

// The cgroup v2 ID of --cgroup PATH (what bpf_get_current_cgroup_id() returns): a directory
// of a cgroup2 mount, else Error(usage) saying where cgroup v2 is mounted, if anywhere.
std::uint64_t cgroup_id(const std::string& path);

// -p and -t name a process and a thread that exist now, else Error(unknown_target): a filter
// on a task already gone (or on a thread's ID given as -p) would silently show nothing.
void require_target_tasks(const CommonOptions& options);

// --cpu as rodata: UINT32_MAX for none; a CPU this machine does not have → Error(unknown_target).
std::uint32_t target_cpu(const CommonOptions& options);

// The process left out as rodata: this one's, unless --include-self or the tool has no task
// filters; 0 for none.
std::uint32_t excluded_tgid(const CommonOptions& options);

// The common task filters (-p, -t, -u, --cgroup, --comm, --cpu, --include-self) into a
// skeleton's rodata (bpf/include/tpkit/task.bpf.h), before load.
template <class Skel>
void apply_task_filters(Skel& skel, const CommonOptions& options)
{
    require_target_tasks(options);
    skel.rodata->tpkit_target_tgid = options.pid;
    skel.rodata->tpkit_target_tid = options.tid;
    skel.rodata->tpkit_target_uid = options.uid.value_or(UINT32_MAX);
    skel.rodata->tpkit_target_cgroup = options.cgroup.empty() ? 0 : cgroup_id(options.cgroup);
    copy_comm(options.comm, skel.rodata->tpkit_target_comm);
    skel.rodata->tpkit_target_cpu = target_cpu(options);
    skel.rodata->tpkit_excluded_tgid = excluded_tgid(options);
}

// Opens Skel, applies the task filters, lets `configure` set the tool's own rodata and which
// programs load, loads, attaches every program (by its SEC name), calls `attached` once, drops
// every capability (what `on_event` and `stopped` need must be opened in `attached`), then
// `on_event` once per Event record until a signal or --duration, then `stopped` once (a
// summary of the events), then reports what was lost.
// A record shorter than Event (a variable-size event's used prefix) leaves the rest zero, but
// the perf buffer pads records with stale bytes: such an event says itself how much of its tail
// is valid (emit.bpf.h).
template <class Skel, class Event>
void run_stream(const Cli& cli, const std::function<void(const Event&)>& on_event,
                const std::function<void(Skel&)>& configure = {},
                const std::function<void()>& attached = {},
                const std::function<void()>& stopped = {})
{
    const CommonOptions& options = cli.options();
    auto skel = Skeleton<Skel>::open(cli.name());
    apply_task_filters(*skel, options);
    const Transport transport = choose_transport(options.perf_buffer);
    configure_transport(*skel, transport);
    if (configure)
        configure(*skel);
    skel.load();

    EventReader reader(transport_maps(*skel), transport, [&](std::span<const std::byte> data) {
        Event e{};
        std::memcpy(&e, data.data(), std::min(data.size(), sizeof(e)));
        on_event(e);
    });
    skel.attach();
    StopSignal stop(options);
    if (attached)
        attached();
    drop_privileges();
    run_stream(reader, stop);
    if (stopped)
        stopped();
    report_lost(cli.name(), reader.lost(), options.json);
}

// The same, printing the columns' header, then one row per event (text or --json) that `keep`
// keeps (every event without it: a filter BPF cannot apply, such as a substring of argv).
template <class Skel, class Event>
void run_stream(const Cli& cli, const Columns<Event>& columns,
                const std::function<void(Skel&)>& configure = {},
                const std::function<bool(const Event&)>& keep = {})
{
    const CommonOptions& options = cli.options();
    Output& out = standard_output();
    MonotonicClock clock;
    run_stream<Skel, Event>(
        cli,
        [&](const Event& e) {
            if (!keep || keep(e))
                columns.row(e, options, clock, out);
        },
        configure, [&] { columns.header(options, out); });
}

} // namespace tpkit
