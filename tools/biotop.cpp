// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biotop: the processes doing the most block I/O, every interval; bcc's biotop.
#include "biotop.h"
#include "biotop.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/run/block.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

namespace {

constexpr const char* examples = R"(  biotop                    # top processes by block I/O, every second
  biotop 5 10               # every 5 seconds, ten times
  biotop -C -r 5            # the top 5, without clearing the screen
  biotop -s bytes           # sorted by bytes (io, bytes, time; all: their sum, as bcc)
  biotop -p 185 -d sda      # only I/O submitted by process 185, to sda
  biotop --json 1 3         # as JSON, one object per row
)";

constexpr std::uint32_t max_keys = 10240;

struct Options {
    std::string disk;
    bool no_clear = false;
    std::size_t rows = 20;
    std::string sort = "all";
};

struct Row {
    biotop_key key;
    biotop_counts counts;
};

// bcc's orders, largest first; "all" adds the three figures up as bcc does (microseconds).
std::uint64_t sort_value(const Options& options, const biotop_counts& c)
{
    if (options.sort == "io")
        return c.io;
    if (options.sort == "bytes")
        return c.bytes;
    if (options.sort == "time")
        return c.ns;
    return c.io + c.bytes + c.ns / 1000;
}

// The top rows since the previous call, in order.
tpkit::Reading collect(const Options& options, tpkit::SwappedMap& counts,
                       tpkit::MissedWatch& missed, tpkit::BlockDeviceNames& names,
                       tpkit::Drain drain)
{
    auto entries = counts.drain(drain);
    const std::uint64_t uncounted = missed.report();
    std::vector<Row> rows;
    for (const auto& entry : entries) {
        Row row{};
        row.key = entry.key_as<decltype(row.key)>();
        // The per-CPU values, summed: the struct's three counters in order.
        if (entry.counters.size() >= 3)
            row.counts = {entry.counters[0], entry.counters[1], entry.counters[2]};
        rows.push_back(row);
    }
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
        return sort_value(options, a.counts) > sort_value(options, b.counts);
    });
    if (rows.size() > options.rows)
        rows.resize(options.rows);

    tpkit::Reading reading;
    reading.uncounted = uncounted;
    reading.counter_labels = {"pid", "comm", "d", "maj", "min", "disk"};
    reading.counter_columns = {{"I/O", "io", 1, 0, ""},
                               {"Kbytes", "bytes", 1024, 0, ""},
                               {"AVGms", "ns", 1000000, 2, "io"}};
    for (const Row& r : rows) {
        std::vector<tpkit::Label> labels{
            {"pid", std::to_string(r.key.pid), true},
            {"comm", std::string(tpkit::text_of(r.key.comm))},
            {"d", r.key.write ? "W" : "R"},
            {"maj", std::to_string(r.key.dev >> TPKIT_MINOR_BITS), true},
            {"min", std::to_string(r.key.dev & TPKIT_MINOR_MASK), true},
            {"disk", names.name_of(r.key.dev)}};
        reading.metrics.push_back({"io", "requests completed", "", labels, r.counts.io});
        reading.metrics.push_back({"bytes", "bytes completed", "bytes", labels, r.counts.bytes});
        reading.metrics.push_back({"ns", "time at the device", "ns", labels, r.counts.ns});
    }
    return reading;
}

// bcc's line above each table: the time and /proc/loadavg.
std::string time_and_load()
{
    std::ifstream in("/proc/loadavg");
    std::string load;
    std::getline(in, load);
    return fmt::format("{} loadavg: {}\n", tpkit::format_hms(std::time(nullptr)), load);
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("biotop",
                   "Show the processes doing the most block device I/O, every INTERVAL seconds (1 "
                   "by default): per process, disk and direction (D: R or W) the requests "
                   "completed (I/O), their kilobytes and their average time at the device.\n-p, "
                   "-t, -u, --cgroup and --comm select the task that submitted the I/O.",
                   examples);
    Options options;
    cli.add_common();
    cli.add_interval_count();
    cli.add_disk(options.disk);
    cli.flag("-C,--noclear", options.no_clear, "do not clear the screen");
    cli.option("-r,--rows", options.rows, "at most ROWS rows (20)")
        .range(std::size_t(1), std::size_t(max_keys));
    cli.option("-s,--sort", options.sort, "sort by all (default), io, bytes or time")
        .one_of({"all", "io", "bytes", "time"});
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::CommonOptions common = cli.options();
        if (common.interval <= 0)
            common.interval = 1;
        auto skel = tpkit::Skeleton<biotop_bpf>::open(cli.name());
        tpkit::apply_task_filters(*skel, common);
        tpkit::apply_disk_filter(*skel, options.disk);
        tpkit::follow_requests_from_submission(*skel);
        tpkit::SwappedMap counts(skel->maps.counts, skel->maps.counts_a, skel->maps.counts_b);
        counts.set_max_entries(max_keys);
        skel.load();
        skel.attach();

        tpkit::BlockDeviceNames names;
        tpkit::MissedWatch missed(
            cli.name(), skel->maps.tpkit_missed,
            fmt::format("more than {} requests in flight, or more than {} rows in an interval",
                        TPKIT_TIMING_MAX_ENTRIES, max_keys));
        // A screen to clear only where there is one.
        const bool clear = !options.no_clear && !common.json && isatty(STDOUT_FILENO);
        tpkit::Output& out = tpkit::standard_output();
        tpkit::StopSignal stop(common);
        tpkit::run_intervals(common, stop, [&](tpkit::Drain drain) {
            tpkit::Reading reading = collect(options, counts, missed, names, drain);
            if (common.json) {
                tpkit::render_json(reading, out, tpkit::now_ns(common.clock));
                return;
            }
            if (clear)
                out.append("\033[H\033[2J");
            out.append(time_and_load());
            tpkit::render_text(reading, out);
        });
    });
}
