// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// switchhist: an embedder's own BPF program, loaded and read through tpkit until Ctrl-C.
#include "switchhist.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/run/tool.hpp>

int main()
{
    return tpkit::run_tool("switchhist", [] {
        tpkit::StopSignal stop(0); // before anything else: SIGINT now ends the loop below
        const auto cpus = static_cast<std::uint64_t>(libbpf_num_possible_cpus());
        auto skel = tpkit::Skeleton<switchhist_bpf>::open("switchhist");
        skel->rodata->cpu_count = cpus;
        skel.load();
        skel.attach();
        tpkit::Output& out = tpkit::standard_output();
        out.print("counting context switches, Ctrl-C to stop\n");
        while (!stop.wait(std::chrono::milliseconds(1000))) {
        }

        auto by_cpu = tpkit::Histogram::from_linear(
            tpkit::sum_percpu_array(skel->maps.switches_by_cpu).at(0), tpkit::linear_range(0, cpus, 1));
        out.print("{} context switches\n{}\n", by_cpu.total(),
                   tpkit::render_bars(by_cpu, {"sched:sched_switch", "cpu", "", "", ""}));
        auto oncpu = tpkit::Histogram::from_log2(tpkit::sum_percpu_array(skel->maps.oncpu_usecs).at(0));
        out.print("{}", tpkit::render_bars(oncpu, {"sched:sched_switch", "on-CPU", "usecs", "", ""}));
    });
}
