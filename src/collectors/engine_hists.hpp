// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The histograms of bpf/include/tpkit/engine_hist.bpf.h (tphist, tplat) read back as metrics:
// the cumulative one without --by (its growth since the previous read), or one per key, drained.
#pragma once

#include "collectors/engine_keys.hpp"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/output/metrics.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpkit {

// --unit of the histogram engines, "ns", "us" or "ms": nanoseconds per unit; anything else →
// Error(usage).
std::uint64_t time_unit_ns(std::string_view unit);

// The unit as bcc's latency tools name it: "nsecs", "usecs", "msecs".
std::string time_unit_name(std::string_view unit);

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
                      const std::string& unit);

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
