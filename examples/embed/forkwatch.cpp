// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// forkwatch: a callback per fork, from tpkit's forksnoop skeleton, until Ctrl-C.
#include "forksnoop.skel.h"

#include <tpkit/cli.hpp>
#include <tpkit/tools/forksnoop.h>
#include <tpkit/skeleton.hpp>
#include <tpkit/transport.hpp>

#include <cstring>

int main()
{
    return tpkit::run_tool("forkwatch", [] {
        tpkit::StopSignal stop(0); // before anything else: SIGINT now ends the loop below
        auto skel = tpkit::Skeleton<forksnoop_bpf>::open("forksnoop");
        // forksnoop's raw tracepoint program alone: it reads both tasks, no tracefs needed.
        bpf_program__set_autoload(skel->progs.fork_tp, false);
        bpf_program__set_autoload(skel->progs.record_clone_flags, false);
        auto transport = tpkit::choose_transport(false);
        tpkit::configure_transport(*skel, transport);
        skel.load();
        skel.attach();

        tpkit::Output& out = tpkit::standard_output(); // never blocks on a slow reader
        tpkit::EventReader reader(tpkit::transport_maps(*skel), transport, [&](auto data) {
            forksnoop_event e{};
            std::memcpy(&e, data.data(), std::min(data.size(), sizeof(e)));
            out.print("fork {} -> {} {}\n", e.parent.pid, e.child_tid, e.child_comm);
        });
        out.print("watching forks, Ctrl-C to stop\n");
        tpkit::run_stream(reader, stop);
        out.print("{} lost\n", reader.lost());
    });
}
