// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tphist: an in-kernel histogram of one integer field of any tracepoint, no compiler needed.
#include <tpkit/cli.hpp>
#include <tpkit/engine.hpp>
#include <tpkit/histogram.hpp>
#include <tpkit/maps.hpp>
#include <tpkit/metrics.hpp>
#include <tpkit/skeleton.hpp>
#include <tpkit/stream.hpp>
// After the tpkit headers: the skeleton's rodata uses their structs.
#include "tphist.skel.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace {

constexpr const char* examples = R"(  tphist syscalls:sys_enter_read count             # read() sizes, log2 buckets, at Ctrl-C
  tphist syscalls:sys_enter_read count 1 5         # print every second, five times
  tphist syscalls:sys_enter_read count --linear 0,4096,512
  tphist syscalls:sys_enter_read count --loglinear 2   # 4 sub-buckets per power of two
  tphist syscalls:sys_enter_read count --by comm --filter 'fd == 0'
  tphist net:netif_receive_skb len --json -d 10
)";

struct Options {
    std::string event;
    std::string field;
    std::string linear;
    unsigned loglinear = 0;
    std::string by;
    std::string filter;
    std::uint32_t max_keys = 1024;
};

// "MIN,MAX,STEP"
tpkit::LinearRange parse_linear(const std::string& text)
{
    std::uint64_t v[3];
    std::size_t at = 0;
    for (int i = 0; i < 3; i++) {
        std::size_t end = text.find(',', at);
        std::string part = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
        bool digits = !part.empty() && part.size() <= 19 &&
                      part.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || (i < 2) == (end == std::string::npos))
            throw tpkit::Error(tpkit::Exit::usage,
                               fmt::format("bad --linear '{}': expected MIN,MAX,STEP", text));
        v[i] = std::stoull(part);
        at = end + 1;
    }
    return tpkit::linear_range(v[0], v[1], v[2]);
}

class HistCollector {
public:
    HistCollector(const tpkit::EventPlan& plan, const tpkit::KeyChoice& key, const Options& options,
                  tphist_bpf& skel)
        : plan_(plan), key_(key), options_(options), skel_(skel),
          keyed_(keyed_histograms(skel, plan.config.hist_layout))
    {
    }

    // The keyed maps of the layout in use.
    static tpkit::SwappedMap keyed_histograms(tphist_bpf& skel, std::uint8_t layout)
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

    // The histograms since the previous call.
    tpkit::Reading collect()
    {
        const auto& config = plan_.config;
        tpkit::Reading reading;
        auto metric = [&](tpkit::Histogram hist, std::vector<tpkit::Label> labels) {
            labels.insert(labels.begin(), {"event", plan_.name.str()});
            reading.metrics.push_back({options_.field, "", "", std::move(labels), std::move(hist)});
        };
        if (key_.source == TPKIT_KEY_NONE) {
            auto slots = tpkit::sum_percpu_array(total_map()).at(0);
            previous_.resize(slots.size());
            std::vector<std::uint64_t> delta(slots.size());
            for (std::size_t i = 0; i < slots.size(); i++)
                delta[i] = slots[i] - std::exchange(previous_[i], slots[i]);
            metric(tpkit::histogram_from_slots(config, delta), {});
        } else {
            std::vector<std::pair<std::string, tpkit::Histogram>> hists;
            for (const auto& entry : keyed_.drain()) {
                const auto k = entry.key_as<tpkit_engine_key>();
                tpkit::note_cut_key("tphist", k, key_);
                hists.emplace_back(tpkit::key_text(k, key_, plan_.format),
                                   tpkit::histogram_from_slots(config, entry.counters));
            }
            std::sort(hists.begin(), hists.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; });
            for (auto& [text, hist] : hists)
                metric(std::move(hist), {{key_.name(), text}});
        }
        report_outside();
        return reading;
    }

private:
    bpf_map* total_map() const
    {
        switch (plan_.config.hist_layout) {
        case TPKIT_HIST_LOGLINEAR:
            return skel_.maps.loglinear_total;
        case TPKIT_HIST_LINEAR:
            return skel_.maps.linear_total;
        default:
            return skel_.maps.log2_total;
        }
    }

    // Values no bucket holds are said, on stderr, rather than dropped in silence.
    void report_outside()
    {
        if (std::uint64_t n = negatives_.increase())
            fmt::print(stderr, "tphist: {} negative values of {} not counted\n", n, options_.field);
        missed_.report();
    }

    const tpkit::EventPlan& plan_;
    const tpkit::KeyChoice& key_;
    const Options& options_;
    tphist_bpf& skel_;
    tpkit::SwappedMap keyed_;
    std::vector<std::uint64_t> previous_;
    tpkit::CounterWatch negatives_{skel_.maps.negatives};
    tpkit::MissedWatch missed_{"tphist", skel_.maps.tpkit_missed,
                               fmt::format("more than {} keys (see --max-keys)", options_.max_keys)};
};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tphist", "Histogram of an integer field of any tracepoint, in the kernel.",
                   examples);
    Options options;
    cli.app().add_option("event", options.event, "the tracepoint, SYSTEM:EVENT")->required();
    cli.app().add_option("field", options.field, "the integer field to measure")->required();
    cli.add_common();
    cli.add_map_memory();
    cli.add_interval_count();
    auto* linear = cli.app().add_option("--linear", options.linear,
                                        "linear buckets MIN,MAX,STEP instead of log2");
    cli.app().add_option("--loglinear", options.loglinear,
                         "split each power of two into 2^K buckets (K = 1..4)")
        ->check(CLI::Range(1u, 4u))
        ->excludes(linear);
    cli.app().add_option("--by", options.by, "one histogram per comm, pid, tid, cpu or FIELD");
    cli.app().add_option("--filter", options.filter,
                         "only events matching this expression (the kernel's filter grammar)");
    cli.app().add_option("--max-keys", options.max_keys, "at most N keys with --by (default 1024)")
        ->check(CLI::Range(1u, 1u << 20));
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        const tpkit::CommonOptions& common = cli.options();
        auto key = tpkit::parse_key(options.by, {TPKIT_KEY_COMM, TPKIT_KEY_PID, TPKIT_KEY_TID,
                                                 TPKIT_KEY_CPU});
        auto plans = tpkit::plan_events(tpkit::live_events_root(), {options.event}, options.filter, 1);
        tpkit::EventPlan& plan = plans.at(0);
        tpkit::configure_value(plan.config, plan.format, options.field);
        tpkit::configure_key(plan.config, key, plan.format);
        if (!options.linear.empty()) {
            auto range = parse_linear(options.linear);
            plan.config.hist_layout = TPKIT_HIST_LINEAR;
            plan.config.linear_min = range.min;
            plan.config.linear_max = range.max;
            plan.config.linear_step = range.step;
        } else if (options.loglinear) {
            plan.config.hist_layout = TPKIT_HIST_LOGLINEAR;
            plan.config.sub_bits = static_cast<std::uint8_t>(tpkit::loglinear_sub_bits(options.loglinear));
        }

        auto skel = tpkit::Skeleton<tphist_bpf>::open("tphist");
        skel->rodata->tpkit_filter = plan.filter;
        skel->rodata->tpkit_config = plan.config;
        tpkit::apply_task_filters(*skel, common);
        if (key.source != TPKIT_KEY_NONE)
            HistCollector::keyed_histograms(*skel, plan.config.hist_layout).set_max_entries(options.max_keys);
        tpkit::raise_fd_limit_for(1, skel->obj);
        skel.load();
        auto link = tpkit::attach_tracepoint(skel->progs.hist_event, plan.name.system, plan.name.event);

        HistCollector printer(plan, key, options, *skel);
        tpkit::StopSignal stop(common.duration);
        tpkit::run_aggregate(common, stop, [&] { return printer.collect(); });
    });
}
