// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/collector.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <utility>

namespace tpkit {

void run_collector(const CommonOptions& options, Collector& collector)
{
    StopSignal stop(options.duration);
    std::uint64_t uncounted = collector.uncounted();
    run_aggregate(options, stop, [&](Drain drain) {
        Reading reading = collector.collect(drain);
        const std::uint64_t now = collector.uncounted();
        reading.uncounted = now - std::exchange(uncounted, now);
        return reading;
    });
}

std::vector<ProgramStats> program_stats(const std::vector<bpf_object*>& objects)
{
    std::vector<ProgramStats> stats;
    for (bpf_object* obj : objects) {
        bpf_program* prog;
        bpf_object__for_each_program(prog, obj)
        {
            const int fd = bpf_program__fd(prog);
            if (fd < 0)
                continue; // not loaded (autoload off)
            bpf_prog_info info{};
            std::uint32_t len = sizeof(info);
            if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
                continue;
            stats.push_back({bpf_program__name(prog), info.run_cnt, info.run_time_ns});
        }
    }
    return stats;
}

} // namespace tpkit
