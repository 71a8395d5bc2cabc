// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// wqlat: workqueue queueing latency, from queueing a work item to a worker starting it, as one
// log2 histogram per work function, counted in the kernel.
#include "wqlat.h"
#include "wqlat.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/kernel/symbols.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace {

constexpr const char* examples = R"(  wqlat                     # queueing latency per work function, at Ctrl-C
  wqlat 1 10                # print every second, ten times
  wqlat -m                  # in milliseconds
  wqlat -w vmstat_update    # only work items running vmstat_update
  wqlat -p 185              # only work queued by process 185
  wqlat --json -d 10        # after 10 seconds, the histograms as JSON
)";

// Work functions the histogram map holds per interval.
constexpr std::uint32_t max_functions = 4096;

struct Options {
    bool milliseconds = false;
    std::string function;
};

// The histograms since the previous call, one per work function, by name.
tpkit::Reading collect(const Options& options, tpkit::SwappedMap& hists, tpkit::MissedWatch& missed,
                       std::optional<tpkit::KernelSymbols>& ksyms,
                       std::optional<tpkit::KernelSymbolsInBackground>& kallsyms_reading,
                       tpkit::Drain drain)
{
    auto entries = hists.drain(drain);
    missed.report();
    if (!entries.empty() && !ksyms)
        ksyms.emplace(kallsyms_reading ? kallsyms_reading->take() : tpkit::KernelSymbols());
    std::vector<std::pair<std::string, tpkit::Histogram>> named;
    for (const auto& entry : entries) {
        const auto key = entry.key_as<wqlat_key>();
        auto symbol = ksyms->find(key.function);
        std::string name = symbol && symbol->offset == 0 ? symbol->name
                           : symbol ? tpkit::frame_text(symbol, true)
                                    : fmt::format("0x{:x}", key.function);
        named.emplace_back(std::move(name), tpkit::Histogram::from_log2(entry.counters));
    }
    std::sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

    const std::string unit = options.milliseconds ? "msecs" : "usecs";
    tpkit::Reading reading;
    for (auto& [name, hist] : named)
        reading.metrics.push_back({unit, "workqueue queueing latency", unit,
                                   {{"event", "workqueue:workqueue_execute_start"}, {"function", name}},
                                   std::move(hist)});
    return reading;
}

// -w FUNC: its addresses, from /proc/kallsyms.
std::vector<std::uint64_t> function_addresses(const std::string& name, const tpkit::KernelSymbols& ksyms)
{
    auto addresses = ksyms.addresses_of(name);
    if (addresses.empty())
        throw tpkit::Error(tpkit::Exit::usage,
                           fmt::format("-w {}: no kernel function of that name", name));
    if (addresses.size() > WQLAT_MAX_FUNCTIONS)
        throw tpkit::Error(tpkit::Exit::usage,
                           fmt::format("-w {}: {} functions have that name, at most {} can be "
                                       "watched", name, addresses.size(), WQLAT_MAX_FUNCTIONS));
    return addresses;
}

void run(const Options& options, const tpkit::CommonOptions& common)
{
    std::optional<tpkit::KernelSymbols> ksyms;
    std::optional<tpkit::KernelSymbolsInBackground> kallsyms_reading; // names the functions at print
    auto skel = tpkit::Skeleton<wqlat_bpf>::open("wqlat");
    tpkit::apply_task_filters(*skel, common);
    skel->rodata->milliseconds = options.milliseconds;
    if (!options.function.empty()) {
        auto addresses = function_addresses(options.function, ksyms.emplace());
        std::copy(addresses.begin(), addresses.end(), skel->rodata->target_functions);
        skel->rodata->target_function_count = static_cast<std::uint32_t>(addresses.size());
    } else {
        kallsyms_reading.emplace();
    }
    tpkit::SwappedMap hists(skel->maps.hists, skel->maps.hists_a, skel->maps.hists_b);
    hists.set_max_entries(max_functions);
    skel.load();
    skel.attach();

    tpkit::MissedWatch missed(
        "wqlat", skel->maps.tpkit_missed,
        fmt::format("more than {} work items queued at once, or {} work functions in an interval",
                    TPKIT_TIMING_MAX_ENTRIES, max_functions));
    tpkit::StopSignal stop(common);
    tpkit::run_aggregate(common, stop, [&](tpkit::Drain drain) {
        return collect(options, hists, missed, ksyms, kallsyms_reading, drain);
    });
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("wqlat",
                   "Summarize workqueue queueing latency per work function: how long work items "
                   "wait from being queued until a worker starts them.\n-p, -t, -u, --cgroup and "
                   "--comm select the task that queues the work.",
                   examples);
    Options options;
    cli.add_common();
    cli.add_interval_count();
    cli.flag("-m,--milliseconds", options.milliseconds, "histograms in milliseconds");
    cli.option("-w,--function", options.function,
               "only work items running this kernel function");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] { run(options, cli.options()); });
}
