// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// biosnoop: every block I/O as it completes, with the task that submitted it; bcc's biosnoop.
#include <tpkit/tools/biosnoop.h>
#include "biosnoop.skel.h"

#include <tpkit/run/block.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/core.h>

namespace {

constexpr const char* examples = R"(  biosnoop                  # every block I/O, as it completes
  biosnoop -Q               # with the time each spent queued in the kernel
  biosnoop -d sda           # only I/O to sda
  biosnoop -m 10            # only I/O that took 10 ms or more at the device
  biosnoop -T               # seconds since the start in place of the time of day
  biosnoop --json | jq .    # one JSON object per I/O
)";

using Event = biosnoop_event;
using tpkit::Align;
using tpkit::Value;

tpkit::BlockDeviceNames disk_names;


Value time_of(const Event& e) { return e.timestamp_ns; }
Value comm_of(const Event& e) { return tpkit::text_of(e.comm); }
Value pid_of(const Event& e) { return e.pid; }
Value tid_of(const Event& e) { return e.tid; }
Value disk_of(const Event& e) { return std::string_view(disk_names.name_of(e.dev)); }
Value rwbs_of(const Event& e) { return tpkit::request_rwbs(e.op, e.flags); }
Value sector_of(const Event& e) { return e.sector; }
Value bytes_of(const Event& e) { return e.bytes; }
Value queued_of(const Event& e)
{
    if (e.queued_ns == BIOSNOOP_NOT_QUEUED)
        return tpkit::absent;
    return tpkit::milliseconds_value(e.queued_ns, 3);
}
Value latency_of(const Event& e) { return tpkit::milliseconds_value(e.latency_ns, 3); }

// bcc's columns: TIME(s) COMM PID DISK T SECTOR BYTES [QUE(ms)] LAT(ms).
tpkit::Columns<Event> columns(bool queued)
{
    std::vector<tpkit::Column<Event>> list{
        tpkit::time_column<Event>(time_of),
        {"COMM", "comm", 16, Align::left, comm_of},
        {"PID", "pid", 7, Align::left, pid_of},
        tpkit::json_column<Event>("tid", tid_of),
        {"DISK", "disk", 9, Align::left, disk_of},
        {"T", "t", 4, Align::left, rwbs_of},
        {"SECTOR", "sector", 12, Align::left, sector_of},
        {"BYTES", "bytes", 8, Align::left, bytes_of},
    };
    if (queued)
        list.push_back({"QUE(ms)", "queue_ns", 7, Align::right, queued_of});
    list.push_back({"LAT(ms)", "latency_ns", 0, Align::right, latency_of});
    return tpkit::Columns<Event>(std::move(list));
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("biosnoop",
                   "Trace block device I/O: one line per request as it completes, with the task "
                   "that submitted it, the disk, operation (T: R read, W write, S sync, …), first "
                   "sector and bytes, and its time at the device (LAT) and queued (QUE, -Q).\n-p, "
                   "-t, -u, --cgroup and --comm select the submitting task.",
                   examples);
    std::string disk;
    bool queued = false;
    double min_ms = 0;
    cli.add_common();
    cli.add_streaming();
    cli.add_disk(disk);
    cli.flag("-Q,--queued", queued, "also the time queued in the kernel (QUE)");
    cli.option("-m,--min-ms,--min", min_ms, "only I/O that took at least MIN_MS at the device")
        .range(0.0, 1e9);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_stream<biosnoop_bpf, Event>(
            cli, columns(queued), [&](biosnoop_bpf& skel) {
                tpkit::apply_disk_filter(skel, disk);
                skel.rodata->min_ns = static_cast<std::uint64_t>(min_ms * 1e6);
                tpkit::follow_requests_from_submission(skel);
            });
    });
}
