// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The histograms of bpf/include/tpkit/engine_hist.bpf.h (tphist, tplat) read back as metrics:
// the cumulative one without --by (its growth since the previous read), or one per key, drained.
#pragma once

#include "engine_keys.hpp"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/output/metrics.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpkit {

// --unit of the histogram engines, "ns", "us" or "ms": nanoseconds per unit; anything else →
// Error(usage).
inline std::uint64_t time_unit_ns(std::string_view unit)
{
    if (unit == "ns")
        return 1;
    if (unit == "us")
        return 1000;
    if (unit == "ms")
        return 1000000;
    throw Error(Exit::usage, fmt::format("bad --unit '{}': expected ns, us or ms", unit));
}

// The unit as bcc's latency tools name it: "nsecs", "usecs", "msecs".
inline std::string time_unit_name(std::string_view unit)
{
    return fmt::format("{}secs", unit.substr(0, 1));
}

class EngineHists {
public:
    // The keyed maps of the layout in use, in a skeleton whose BPF program has engine_hist.bpf.h's
    // maps.
    template <class Skel>
    static SwappedMap keyed_maps(Skel& skel, std::uint8_t layout)
    {
        switch (layout) {
        case TPKIT_HIST_LOGLINEAR:
            return {skel.maps.loglinear_by_key, skel.maps.loglinear_by_key_a,
                    skel.maps.loglinear_by_key_b};
        case TPKIT_HIST_LINEAR:
            return {skel.maps.linear_by_key, skel.maps.linear_by_key_a, skel.maps.linear_by_key_b};
        default:
            return {skel.maps.log2_by_key, skel.maps.log2_by_key_a, skel.maps.log2_by_key_b};
        }
    }

    // Before load: the keyed maps of `layout` hold `keys` (0: no --by); those of the other
    // layouts, which the program never reaches, are left out (SwappedMap::leave_out).
    template <class Skel>
    static void size_keyed_maps(Skel& skel, std::uint32_t keys, std::uint8_t layout)
    {
        for (std::uint8_t l : {TPKIT_HIST_LOG2, TPKIT_HIST_LOGLINEAR, TPKIT_HIST_LINEAR}) {
            SwappedMap keyed = keyed_maps(skel, l);
            if (keys && l == layout)
                keyed.set_max_entries(keys);
            else
                keyed.leave_out();
        }
    }

    template <class Skel>
    static bpf_map* total_map(Skel& skel, std::uint8_t layout)
    {
        switch (layout) {
        case TPKIT_HIST_LOGLINEAR:
            return skel.maps.loglinear_total;
        case TPKIT_HIST_LINEAR:
            return skel.maps.linear_total;
        default:
            return skel.maps.log2_total;
        }
    }

    // tool: for notes on stderr; config: the layout; format: the event the --by key comes from;
    // labels: the keys' labels, from the skeleton that takes the keys.
    template <class Skel>
    EngineHists(Skel& skel, std::string tool, const tpkit_engine_config& config,
                const KeyChoice& key, const EventFormat& format, EngineKeyLabels labels)
        : tool_(std::move(tool)), config_(config), key_(key), format_(format),
          total_(total_map(skel, config.hist_layout)), keyed_(keyed_maps(skel, config.hist_layout)),
          labels_(std::move(labels))
    {
    }

    // Appends the histograms since the previous call to reading, as metrics NAME in UNIT with
    // the label event=EVENT, then the key's.
    void collect_into(Reading& reading, Drain drain, const std::string& event, const std::string& name,
                      const std::string& unit)
    {
        auto metric = [&](Histogram hist, std::vector<Label> labels) {
            labels.insert(labels.begin(), {"event", event});
            reading.metrics.push_back({name, "", unit, std::move(labels), std::move(hist)});
        };
        if (key_.empty()) {
            auto slots = sum_percpu_array(total_).at(0);
            previous_.resize(slots.size());
            std::vector<std::uint64_t> delta(slots.size());
            for (std::size_t i = 0; i < slots.size(); i++)
                delta[i] = slots[i] - std::exchange(previous_[i], slots[i]);
            metric(histogram_from_slots(config_, delta), {});
            return;
        }
        std::vector<std::pair<std::vector<Label>, Histogram>> hists;
        for (const auto& entry : keyed_.drain(drain)) {
            const auto k = entry.key_as<tpkit_engine_key>();
            note_cut_key(tool_, k, key_);
            hists.emplace_back(labels_.labels(k, format_), histogram_from_slots(config_, entry.counters));
        }
        labels_.end_interval();
        std::sort(hists.begin(), hists.end(),
                  [](const auto& a, const auto& b) { return labels_less(a.first, b.first); });
        for (auto& [labels, hist] : hists)
            metric(std::move(hist), std::move(labels));
    }

private:
    std::string tool_;
    const tpkit_engine_config& config_;
    const KeyChoice& key_;
    const EventFormat& format_;
    bpf_map* total_;
    SwappedMap keyed_;
    EngineKeyLabels labels_;
    std::vector<std::uint64_t> previous_;
};

} // namespace tpkit
