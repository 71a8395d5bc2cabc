// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biopattern: how much block I/O is random or sequential, per disk; bcc's biopattern.
#include "biopattern.h"
#include "biopattern.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/block.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace {

constexpr const char* examples = R"(  biopattern                # random and sequential I/O per disk, at Ctrl-C
  biopattern 1 10           # print every second, ten times
  biopattern -T 1           # every second, with the time
  biopattern -d sda 1       # only sda, every second
  biopattern --json --duration 10  # after 10 seconds, as JSON
)";

constexpr std::uint32_t max_disks = 1024;

// The counts since the previous call, one row per disk that completed I/O, by name.
tpkit::Reading collect(tpkit::SwappedMap& counts, tpkit::MissedWatch& missed,
                       tpkit::BlockDeviceNames& names, tpkit::Drain drain)
{
    auto entries = counts.drain(drain);
    missed.report();
    tpkit::Reading reading;
    reading.counter_labels = {"disk"};
    reading.counter_columns = {{"%RND", "random", 1, 0, "count", true},
                               {"%SEQ", "sequential", 1, 0, "count", true},
                               {"COUNT", "count", 1, 0, ""},
                               {"KBYTES", "bytes", 1024, 0, ""}};
    std::vector<std::pair<std::string, biopattern_counts>> disks;
    for (const auto& entry : entries) {
        const auto dev = entry.key_as<std::uint32_t>();
        // The per-CPU values, summed: three counters in the struct's order.
        biopattern_counts sum{};
        if (entry.counters.size() >= 3)
            sum = {entry.counters[0], entry.counters[1], entry.counters[2]};
        disks.emplace_back(names.name_of(dev), sum);
    }
    std::sort(disks.begin(), disks.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [disk, c] : disks) {
        std::vector<tpkit::Label> labels{{"disk", disk}};
        reading.metrics.push_back({"count", "completions", "", labels, c.sequential + c.random});
        reading.metrics.push_back({"sequential", "sequential completions", "", labels, c.sequential});
        reading.metrics.push_back({"random", "random completions", "", labels, c.random});
        reading.metrics.push_back({"bytes", "bytes completed", "bytes", labels, c.bytes});
    }
    return reading;
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("biopattern",
                   "Show how much block device I/O is random or sequential, per disk: a completed "
                   "request is sequential when it begins where the disk's previous one ended (a "
                   "disk's first completion has nothing to follow and is not counted).\n-p, -t, -u, "
                   "--cgroup and --comm select the task current at the completion, which is seldom "
                   "the one that submitted the I/O.",
                   examples);
    std::string disk;
    cli.add_common();
    cli.add_interval_count();
    cli.add_disk(disk);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        const tpkit::CommonOptions& common = cli.options();
        auto skel = tpkit::Skeleton<biopattern_bpf>::open(cli.name());
        tpkit::apply_task_filters(*skel, common);
        tpkit::apply_disk_filter(*skel, disk);
        tpkit::SwappedMap counts(skel->maps.counts, skel->maps.counts_a, skel->maps.counts_b);
        counts.set_max_entries(max_disks);
        skel.load();
        skel.attach();

        tpkit::BlockDeviceNames names;
        tpkit::MissedWatch missed(cli.name(), skel->maps.tpkit_missed,
                                  fmt::format("more than {} disks", max_disks));
        tpkit::StopSignal stop(common);
        tpkit::run_aggregate(common, stop, [&](tpkit::Drain drain) { return collect(counts, missed, names, drain); });
    });
}
