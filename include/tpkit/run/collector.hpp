// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// An aggregating tool once loaded and attached: each tool has one Collector class, its main runs
// it with run_collector(), an exporter reads many at scrape time (MetricCollector); destroying it
// detaches and unloads.
#pragma once

#include "tpkit/bpf/maps.hpp"
#include "tpkit/bpf/program_stats.hpp"
#include "tpkit/bpf/skeleton.hpp"
#include "tpkit/cli/cli.hpp"
#include "tpkit/output/metrics.hpp"
#include "tpkit/output/output.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct bpf_object;

namespace tpkit {

class Collector {
public:
    virtual ~Collector() = default;

    // Writes what was counted since the previous call into out (text or, with --json, JSON
    // lines); maps are drained, so each print is an interval's. Drain::last for the run's last.
    virtual void print(Drain drain, const CommonOptions& options, Output& out) = 0;
    // Events not counted since the start: keys that found a map full, starts with no room,
    // values no bucket holds. Each is also said once on stderr when seen.
    virtual std::uint64_t uncounted() const = 0;
    // The loaded BPF objects: their programs, each attached, and their run counts and times.
    virtual std::vector<bpf_object*> objects() const = 0;
};

// A collector whose counts are metrics (a Reading): printed as bcc's tables and histograms or
// JSON lines (metrics.hpp), and what tpkit-exporter serves.
class MetricCollector : public Collector {
public:
    // What was counted since the previous call.
    virtual Reading collect(Drain drain) = 0;
    // collect()'s Reading, with the events not counted since the previous print.
    void print(Drain drain, const CommonOptions& options, Output& out) override;

private:
    std::uint64_t uncounted_printed_ = 0;
};

// The collector of one skeleton: owns it (so destroying the collector detaches) and reads its
// tpkit_missed counter (maps.bpf.h) as the events not counted.
template <class Skel, class Base = MetricCollector>
class SkeletonCollector : public Base {
public:
    std::uint64_t uncounted() const override { return missed_ ? missed_->total() : 0; }
    std::vector<bpf_object*> objects() const override { return {skel_->obj}; }

protected:
    explicit SkeletonCollector(Skeleton<Skel> skel) : skel_(std::move(skel)) {}

    // Loads and attaches the skeleton as configured; `missed_full`: what a full map means, for
    // the "N events not counted: …" line.
    void load_and_attach(const std::string& missed_full)
    {
        skel_.load();
        skel_.attach();
        watch_missed(missed_full);
    }
    // For a tool that attaches some programs itself, after load and attach.
    void watch_missed(const std::string& missed_full)
    {
        missed_.emplace(skel_.what(), skel_->maps.tpkit_missed, missed_full);
    }
    // Says on stderr the events not counted since the last call: at every collect.
    std::uint64_t report_missed() { return missed_ ? missed_->report() : 0; }

    Skeleton<Skel> skel_;

private:
    std::optional<MissedWatch> missed_;
};

// An aggregating tool's loop on its collector: print() every --interval seconds (--count times
// at most), or once at the end without an interval; a stop signal or --duration prints what has
// been gathered since the last print, then returns. With -T each print is preceded by HH:MM:SS
// (text output only). After each print, the runs of the tool's programs that the kernel skipped
// since the last one (program_stats.hpp) are said on stderr and, with --json, in a
// {"type":"lost"} line. Then stdout ends (Output::end): its reader has everything and EOF
// before the tool detaches.
void run_collector(const CommonOptions& options, Collector& collector);

} // namespace tpkit
