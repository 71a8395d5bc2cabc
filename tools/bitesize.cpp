// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// bitesize: block I/O sizes as histograms by process name, counted in the kernel; bcc's bitesize.
#include "bitesize.h"
#include "bitesize.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/block.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace {

constexpr const char* examples = R"(  bitesize                  # I/O size histograms by process name, at Ctrl-C
  bitesize 1 10             # print every second, ten times
  bitesize -c postgres      # only I/O submitted by tasks named postgres
  bitesize -d sda           # only I/O to sda
  bitesize --json --duration 10  # after 10 seconds, as JSON
)";

constexpr std::uint32_t max_names = 10240;

// The histograms since the previous call, one per process name, by name.
tpkit::Reading collect(tpkit::SwappedMap& hists, tpkit::MissedWatch& missed, tpkit::Drain drain)
{
    auto entries = hists.drain(drain);
    missed.report();
    std::vector<std::pair<std::string, tpkit::Histogram>> named;
    for (const auto& entry : entries) {
        const auto key = entry.key_as<bitesize_key>();
        named.emplace_back(std::string(tpkit::text_of(key.comm)),
                           tpkit::Histogram::from_log2(entry.counters));
    }
    std::sort(named.begin(), named.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    tpkit::Reading reading;
    for (auto& [comm, hist] : named)
        reading.metrics.push_back({"kbytes", "block I/O sizes", "kbytes",
                                   {{"event", "block:block_rq_issue"}, {"comm", comm}},
                                   std::move(hist)});
    return reading;
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("bitesize",
                   "Summarize block device I/O sizes (kilobytes) as histograms by the name of the "
                   "process that submitted the I/O, counted as each request is issued.\n-p, -u, "
                   "--tid, --cgroup and -c (--comm) select the submitting task.",
                   examples);
    std::string disk;
    cli.add_common();
    cli.add_interval_count();
    cli.add_disk(disk);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        const tpkit::CommonOptions& common = cli.options();
        auto skel = tpkit::Skeleton<bitesize_bpf>::open(cli.name());
        tpkit::apply_task_filters(*skel, common);
        tpkit::apply_disk_filter(*skel, disk);
        tpkit::SwappedMap hists(skel->maps.hists, skel->maps.hists_a, skel->maps.hists_b);
        hists.set_max_entries(max_names);
        skel.load();
        skel.attach();

        tpkit::MissedWatch missed(
            cli.name(), skel->maps.tpkit_missed,
            fmt::format("more than {} process names in an interval", max_names));
        tpkit::StopSignal stop(common);
        tpkit::run_aggregate(common, stop, [&](tpkit::Drain drain) { return collect(hists, missed, drain); });
    });
}
