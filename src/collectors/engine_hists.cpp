// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/engine_hists.hpp"

#include <tpkit/output/histogram.hpp>
#include <tpkit/support/error.hpp>

#include <fmt/core.h>

#include <algorithm>

namespace tpkit {

std::uint64_t time_unit_ns(std::string_view unit)
{
    if (unit == "ns")
        return 1;
    if (unit == "us")
        return 1000;
    if (unit == "ms")
        return 1000000;
    throw Error(Exit::usage, fmt::format("bad --unit '{}': expected ns, us or ms", unit));
}

std::string time_unit_name(std::string_view unit)
{
    return fmt::format("{}secs", unit.substr(0, 1));
}

void EngineHists::collect_into(Reading& reading, Drain drain, const std::string& event,
                               const std::string& name, const std::string& unit)
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

} // namespace tpkit
