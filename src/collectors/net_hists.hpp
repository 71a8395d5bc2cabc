// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What netrxlen and nettxlen share: log2 histograms of packet lengths filled in the kernel, one
// or one per device (--per-dev) and per whatever else the tool splits by, only one device's with
// --dev, drained each interval. Their BPF programs include netdev.bpf.h (the rodata of --dev and
// --per-dev) and have one swapped map, hists, whose key begins with the device name.
#pragma once

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/output/histogram.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/collector.hpp>
#include <tpkit/run/columns.hpp>
#include <tpkit/run/task_filters.hpp>

#include <fmt/core.h>
#include <net/if.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tpkit::net_hists {

struct Options {
    std::string dev;
    bool per_dev = false;
};

// Keys each half of the histograms' map holds when split.
constexpr std::uint32_t max_keys = 1024;

// --dev and --per-dev; `packets` says which ("packets received").
inline void add_options(Cli& cli, Options& options, const std::string& packets)
{
    cli.option("--dev", options.dev, "only " + packets + " on device DEV");
    cli.flag("--per-dev", options.per_dev, "one histogram per device");
}

inline std::uint32_t current_netns_inode()
{
    struct stat st{};
    if (stat("/proc/self/ns/net", &st) != 0)
        throw Error(Exit::failure, "cannot read /proc/self/ns/net");
    return static_cast<std::uint32_t>(st.st_ino);
}

// How a tool labels its histograms: the labels of a key (the event first), and what the lengths
// are ("received packet lengths").
template <typename Key>
struct Describe {
    std::string help;
    std::function<std::vector<Label>(const Key&)> labels;
};

// Before load: --dev's device (a name means something only inside a network namespace: its
// index and this namespace) and --per-dev into the rodata of netdev.bpf.h. Unknown devices are
// refused here, before anything is loaded.
template <typename Skel>
void select_device(Skel& skel, const Options& options)
{
    std::uint32_t ifindex = 0;
    if (!options.dev.empty()) {
        ifindex = if_nametoindex(options.dev.c_str());
        if (ifindex == 0)
            throw Error(Exit::unknown_target, fmt::format("unknown device '{}'", options.dev));
    }
    skel.rodata->target_ifindex = ifindex;
    skel.rodata->target_netns = ifindex ? current_netns_inode() : 0;
    skel.rodata->per_dev = options.per_dev;
}

// The collector of netrxlen and nettxlen: `skel` opened and configured (select_device(), the
// tool's own rodata), sizes the map, loads and attaches: the skeleton's own attach, or the tool's,
// whose link `attach` returns (else an empty Link) and the collector keeps. Each collect gives the
// histograms since the previous one: one per key when split, else one (also when empty, so that
// JSON readers get a total of 0).
template <typename Skel, typename Key>
class Collector : public SkeletonCollector<Skel> {
public:
    Collector(Skeleton<Skel> skel, bool split, Describe<Key> describe,
              const std::function<Link(Skeleton<Skel>&)>& attach)
        : SkeletonCollector<Skel>(std::move(skel)), split_(split), describe_(std::move(describe)),
          hists_(this->skel_->maps.hists, this->skel_->maps.hists_a, this->skel_->maps.hists_b)
    {
        hists_.set_max_entries(split ? max_keys : 1);
        this->skel_.load();
        link_ = attach(this->skel_);
        this->watch_missed(fmt::format("more than {} histograms", max_keys));
    }

    Reading collect(Drain drain) override
    {
        Reading reading;
        auto entries = hists_.drain(drain);
        this->report_missed();
        if (entries.empty() && !split_)
            entries.push_back({{}, {}});
        for (const auto& entry : entries) {
            const auto key = entry.key_as<Key>();
            reading.metrics.push_back({"len", describe_.help, "bytes", describe_.labels(key),
                                       Histogram::from_log2(entry.counters)});
        }
        return reading;
    }

private:
    bool split_;
    Describe<Key> describe_;
    SwappedMap hists_;
    // Destroyed before the skeleton (the base): the tool's own attachment.
    Link link_{nullptr, bpf_link__destroy};
};

} // namespace tpkit::net_hists
