// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// An aggregating tool once loaded and attached: what it counted since the last look, as data.
// A tool's main loops on it (run_collector), an exporter reads many at scrape time; destroying
// it detaches and unloads.
#pragma once

#include "tpkit/bpf/maps.hpp"
#include "tpkit/bpf/program_stats.hpp"
#include "tpkit/cli/cli.hpp"
#include "tpkit/output/metrics.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct bpf_object;

namespace tpkit {

class Collector {
public:
    virtual ~Collector() = default;

    // What was counted since the previous call: maps are drained, so readings are deltas.
    // Drain::last when no call follows.
    virtual Reading collect(Drain drain) = 0;
    // Events not counted since the start: keys that found a map full, starts with no room,
    // values no bucket holds. Each is also said once on stderr when seen.
    virtual std::uint64_t uncounted() const = 0;
    // The loaded BPF objects: their programs, each attached, and their run counts and times.
    virtual std::vector<bpf_object*> objects() const = 0;
};

// A collector of pieces: `state` owns the skeletons and links and lives as long as the
// collector; `collect` and `uncounted` read through it.
class CollectorOf : public Collector {
public:
    CollectorOf(std::shared_ptr<void> state, std::vector<bpf_object*> objects,
                std::function<Reading(Drain)> collect, std::function<std::uint64_t()> uncounted)
        : state_(std::move(state)), objects_(std::move(objects)), collect_(std::move(collect)),
          uncounted_(std::move(uncounted))
    {
    }
    Reading collect(Drain drain) override { return collect_(drain); }
    std::uint64_t uncounted() const override { return uncounted_(); }
    std::vector<bpf_object*> objects() const override { return objects_; }

private:
    // Declared first, so destroyed last: the readers below refer to it.
    std::shared_ptr<void> state_;
    std::vector<bpf_object*> objects_;
    std::function<Reading(Drain)> collect_;
    std::function<std::uint64_t()> uncounted_;
};

// An aggregating tool's loop on its collector: every interval (or once at the end), until a
// signal, --duration or the count.
void run_collector(const CommonOptions& options, Collector& collector);

} // namespace tpkit
