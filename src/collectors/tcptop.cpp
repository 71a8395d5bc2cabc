// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/tcptop.hpp"
#include "collectors/top_screen.hpp"

#include <tpkit/tools/tcptop.h>
#include "tcptop.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/run/task_filters.hpp>

#include <fmt/core.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <vector>

namespace tpkit::tcptop {
namespace {

struct Row {
    tcptop_key key;
    tcptop_counts counts;
};

// libbpf-tools' order: IPv4 before IPv6, then the most bytes first (both ways, sent or
// received).
bool before(const Options& options, const Row& a, const Row& b)
{
    if (a.key.tuple.family != b.key.tuple.family)
        return a.key.tuple.family < b.key.tuple.family;
    if (options.sort == "sent")
        return a.counts.sent > b.counts.sent;
    if (options.sort == "received")
        return a.counts.received > b.counts.received;
    return a.counts.sent + a.counts.received > b.counts.sent + b.counts.received;
}

// libbpf-tools' PID width: as many digits as pid_max has, 6 at least.
std::size_t pid_width()
{
    std::ifstream in("/proc/sys/kernel/pid_max");
    std::string max;
    in >> max;
    return std::max<std::size_t>(6, max.size());
}

std::vector<Label> labels_of(const tcptop_key& key)
{
    return {{"pid", std::to_string(key.pid), true},
            {"comm", std::string(text_of(key.comm))},
            {"ip", std::to_string(ip_version(key.tuple)), true},
            {"laddr", local_address_text(key.tuple)},
            {"lport", std::to_string(key.tuple.sport), true},
            {"raddr", remote_address_text(key.tuple)},
            {"rport", std::to_string(key.tuple.dport), true}};
}

// Bytes sent and received by process and connection.
class Collector : public SkeletonCollector<tcptop_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options),
          counts_(skel_->maps.counts, skel_->maps.counts_a, skel_->maps.counts_b),
          screen_(options.no_clear), pid_width_(pid_width())
    {
        counts_.set_max_entries(max_keys);
        load_and_attach(fmt::format("more than {} connections in an interval", max_keys));
    }

    // The top rows since the previous call, in order (JSON and the exporter: exact bytes).
    Reading collect(Drain drain) override
    {
        Reading reading;
        reading.counter_labels = {"pid", "comm", "ip", "laddr", "lport", "raddr", "rport"};
        reading.counter_columns = {{"RX_BYTES", "received", 1, 0, ""},
                                   {"TX_BYTES", "sent", 1, 0, ""}};
        for (const Row& r : top_rows(drain)) {
            auto labels = labels_of(r.key);
            reading.metrics.push_back({"received", "bytes received", "bytes", labels, r.counts.received});
            reading.metrics.push_back({"sent", "bytes sent", "bytes", labels, r.counts.sent});
        }
        return reading;
    }

    void print(Drain drain, const CommonOptions& options, Output& out) override
    {
        if (options.json) {
            MetricCollector::print(drain, options, out);
            return;
        }
        screen_.heading(out, !options_.no_summary);
        const auto rows = top_rows(drain);
        table_heading(out, "LADDR", "RADDR", 21);
        bool ipv6_heading = false;
        for (const Row& r : rows) {
            const bool ipv6 = r.key.tuple.family == AF_INET6;
            if (ipv6 && !ipv6_heading) {
                out.append("\n");
                table_heading(out, "LADDR6", "RADDR6", 51);
                ipv6_heading = true;
            }
            // libbpf-tools' kilobytes: whole ones, rounded down.
            out.append(fmt::format("{:<{}} {:<12.12} {:<{}} {:<{}} {:>6} {:>6}\n", r.key.pid,
                                   pid_width_, text_of(r.key.comm),
                                   local_endpoint_text(r.key.tuple), ipv6 ? 51 : 21,
                                   remote_endpoint_text(r.key.tuple), ipv6 ? 51 : 21,
                                   r.counts.received / 1024, r.counts.sent / 1024));
        }
        out.append("\n");
    }

private:
    static Skeleton<tcptop_bpf> opened(const Cli& cli, const Options& options)
    {
        require_event({"sock", "sock_send_length"}, "Linux 6.3 and later have it");
        auto skel = Skeleton<tcptop_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        apply_inet_filter(*skel, options.filter);
        return skel;
    }

    // The interval's rows, in order, as many as -r allows.
    std::vector<Row> top_rows(Drain drain)
    {
        auto entries = counts_.drain(drain);
        report_missed();
        std::vector<Row> rows;
        for (const auto& entry : entries) {
            Row row{entry.key_as<tcptop_key>(), {}};
            // The struct's two counters in order.
            if (entry.counters.size() >= 2)
                row.counts = {entry.counters[0], entry.counters[1]};
            rows.push_back(row);
        }
        keep_top_rows(rows, [&](const Row& a, const Row& b) { return before(options_, a, b); },
                      options_.rows);
        return rows;
    }

    void table_heading(Output& out, const char* local, const char* remote, int width) const
    {
        out.append(fmt::format("{:<{}} {:<12} {:<{}} {:<{}} {:>6} {:>6}\n", "PID", pid_width_,
                               "COMM", local, width, remote, width, "RX_KB", "TX_KB"));
    }

    Options options_;
    SwappedMap counts_;
    TopScreen screen_; // in text: each table on a screen of its own
    std::size_t pid_width_;
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    add_family_options(cli, options.filter);
    cli.flag("-C,--noclear", options.no_clear, "do not clear the screen");
    cli.flag("-S,--nosummary", options.no_summary, "no line of the time and load average");
    cli.option("-r,--rows", options.rows, "at most ROWS rows (20)")
        .range(std::size_t(1), std::size_t(max_keys));
    cli.option("-s,--sort", options.sort,
               "sort by all (bytes both ways, the default), sent or received")
        .one_of({"all", "sent", "received"});
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::tcptop
