// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/wqlat.hpp"

#include <tpkit/tools/wqlat.h>
#include "wqlat.skel.h"

#include <tpkit/kernel/symbols.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/limits.h>
#include <tpkit/run/task_filters.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <optional>

namespace tpkit::wqlat {
namespace {

// -w FUNC: its addresses, from /proc/kallsyms.
std::vector<std::uint64_t> function_addresses(const std::string& name, const KernelSymbols& ksyms)
{
    auto addresses = ksyms.addresses_of(name);
    if (addresses.empty())
        throw Error(Exit::usage, fmt::format("-w {}: no kernel function of that name", name));
    if (addresses.size() > WQLAT_MAX_FUNCTIONS)
        throw Error(Exit::usage, fmt::format("-w {}: {} functions have that name, at most {} can "
                                             "be watched", name, addresses.size(),
                                             WQLAT_MAX_FUNCTIONS));
    return addresses;
}

// The histograms since the previous call, one per work function, by name.
class Collector : public SkeletonCollector<wqlat_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli, options)), options_(options),
          hists_(skel_->maps.hists, skel_->maps.hists_a, skel_->maps.hists_b)
    {
        if (!options.function.empty()) {
            auto addresses = function_addresses(options.function, ksyms_.emplace());
            std::copy(addresses.begin(), addresses.end(), skel_->rodata->target_functions);
            skel_->rodata->target_function_count = static_cast<std::uint32_t>(addresses.size());
        } else {
            kallsyms_reading_.emplace();
        }
        hists_.set_max_entries(max_functions);
        load_and_attach(fmt::format("more than {} work items queued at once, or {} work "
                                    "functions in an interval",
                                    TPKIT_TIMING_MAX_ENTRIES, max_functions));
    }

    Reading collect(Drain drain) override
    {
        auto entries = hists_.drain(drain);
        report_missed();
        if (!entries.empty() && !ksyms_)
            ksyms_.emplace(kallsyms_reading_ ? kallsyms_reading_->take() : KernelSymbols());
        std::vector<std::pair<std::string, Histogram>> named;
        for (const auto& entry : entries) {
            const auto key = entry.key_as<wqlat_key>();
            auto symbol = ksyms_->find(key.function);
            std::string name = symbol && symbol->offset == 0 ? symbol->name
                               : symbol ? frame_text(symbol, true)
                                        : fmt::format("0x{:x}", key.function);
            named.emplace_back(std::move(name), Histogram::from_log2(entry.counters));
        }
        std::sort(named.begin(), named.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });

        const std::string unit = options_.milliseconds ? "msecs" : "usecs";
        Reading reading;
        for (auto& [name, hist] : named)
            reading.metrics.push_back(
                {unit, "workqueue queueing latency", unit,
                 {{"event", "workqueue:workqueue_execute_start"}, {"function", name}},
                 std::move(hist)});
        return reading;
    }

private:
    static Skeleton<wqlat_bpf> opened(const Cli& cli, const Options& options)
    {
        auto skel = Skeleton<wqlat_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        skel->rodata->milliseconds = options.milliseconds;
        return skel;
    }

    Options options_;
    SwappedMap hists_;
    std::optional<KernelSymbols> ksyms_;
    std::optional<KernelSymbolsInBackground> kallsyms_reading_; // names the functions at print
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    cli.flag("-m,--milliseconds", options.milliseconds, "histograms in milliseconds");
    cli.option("-w,--function", options.function,
               "only work items running this kernel function");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::wqlat
