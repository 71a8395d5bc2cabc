// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What the kernel counts for each loaded BPF program: its runs and their time (while
// kernel.bpf_stats_enabled is 1), and the runs it skipped. The kernel does not run a tracepoint
// program while another BPF program runs on the same CPU (classic tracepoint programs share one
// per-CPU guard, a raw tracepoint program has its own) and counts each skipped run in the
// program's recursion_misses: the events of those runs are not seen. Read from
// /proc/self/fdinfo, which needs no capability, so a tool that dropped its capabilities reads
// them without the kernel checking CAP_BPF for it (bpf_obj_get_info_by_fd does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct bpf_object;

namespace tpkit {

struct ProgramStats {
    std::string name;
    std::uint64_t runs = 0;
    std::uint64_t run_time_ns = 0;
    std::uint64_t recursion_misses = 0; // runs the kernel skipped (see above)
};

// The loaded programs of these objects, by name.
std::vector<ProgramStats> program_stats(const std::vector<bpf_object*>& objects);

// Runs skipped, summed over every BPF program a process holds (each program once, however many
// descriptors refer to it): a tool's own programs, whichever way it loaded them. `process` is
// its /proc entry: "self", or a PID (whose descriptors only root may read).
std::uint64_t process_recursion_misses(std::string_view process = "self");

// The fdinfo text of a BPF program's descriptor, parsed ("run_cnt:\t5\n…"); fields this kernel
// does not print stay 0.
ProgramStats parse_program_fdinfo(std::string_view fdinfo);

// process_recursion_misses() read at every interval: how many more since the last read, each
// increase said once on stderr ("TOOL: N runs of its BPF programs skipped …").
class SkippedRuns {
public:
    explicit SkippedRuns(std::string tool) : tool_(std::move(tool)) {}
    std::uint64_t report();

private:
    std::string tool_;
    std::uint64_t seen_ = 0;
};

// The line SkippedRuns says: TOOL, how many runs, and what that means for the output.
std::string skipped_runs_message(std::string_view tool, std::uint64_t runs);

} // namespace tpkit
