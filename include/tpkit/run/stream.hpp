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
#include "tpkit/run/task_filters.hpp"
#include "tpkit/run/tool.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>

namespace tpkit {

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
