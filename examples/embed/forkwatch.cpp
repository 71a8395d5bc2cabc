// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// forkwatch: a callback per fork, on tpkit's forksnoop skeleton and tpkit's runner.
#include "forksnoop.skel.h"

#include <tpkit/run/stream.hpp>
#include <tpkit/tools/forksnoop.h>

int main(int argc, char** argv)
{
    tpkit::Cli cli("forkwatch", "A line per fork.", "  forkwatch --comm bash   # forks by bash\n");
    cli.add_common(); // -p, -t, -u, --cgroup, --comm (applied in BPF), -d, ...
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::Output& out = tpkit::standard_output(); // never blocks on a slow reader
        tpkit::run_stream<forksnoop_bpf, forksnoop_event>(
            cli,
            [&](const forksnoop_event& e) {
                out.print("fork {} -> {} {}\n", e.parent.pid, e.child_tid, e.child_comm);
            },
            [](forksnoop_bpf& skel) {
                // forksnoop's raw tracepoint program alone: it reads both tasks, no tracefs needed.
                tpkit::check_libbpf(bpf_program__set_autoload(skel.progs.fork_tp, false),
                                    "cannot choose forksnoop's programs");
            },
            [&] { out.print("watching forks, Ctrl-C to stop\n"); });
    });
}
