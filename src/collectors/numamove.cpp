// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/numamove.hpp"

#include <tpkit/tools/numamove.h>
#include "numamove.skel.h"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/kernel/core_btf.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/run/task_filters.hpp>

#include <cctype>
#include <ctime>
#include <map>
#include <string>
#include <variant>

namespace tpkit::numamove {
namespace {

constexpr const char* numa_reason = "numa_misplaced";

// The running kernel's enum migrate_reason (its members move between kernels: MR_DAMON is 6.18's
// own), named as the tracepoint's format names most of them: "compaction", "numa_misplaced".
std::map<std::uint32_t, std::string> reason_names()
{
    std::map<std::uint32_t, std::string> names;
    for (const auto& [value, name] : kernel_enum_values("migrate_reason").value_or(std::map<std::int64_t, std::string>{})) {
        if (value < 0 || value >= NUMAMOVE_REASONS - 1 || name.rfind("MR_", 0) != 0 || name == "MR_TYPES")
            continue;
        std::string lower;
        for (char c : name.substr(3))
            lower += char(std::tolower(static_cast<unsigned char>(c)));
        names[std::uint32_t(value)] = lower;
    }
    if (names.empty()) // a kernel without the enum in its BTF: the numbers 6.1 and later give
        names = {{0, "compaction"},     {1, "memory_failure"}, {2, "memory_hotplug"},
                 {3, "syscall"},        {4, "mempolicy_mbind"}, {5, "numa_misplaced"},
                 {6, "contig_range"},   {7, "longterm_pin"},   {8, "demotion"}};
    return names;
}

class Collector : public SkeletonCollector<numamove_bpf> {
public:
    Collector(const Cli& cli, const Options& options)
        : SkeletonCollector(opened(cli)), options_(options), names_(reason_names()), counts_(skel_->maps.counts)
    {
        // Nothing goes uncounted: a call whose start found no room is counted untimed, as its
        // reason's TIMED says.
        skel_.load();
        skel_.attach();
    }

    Reading collect(Drain) override
    {
        const auto growth = counts_.increase();
        Reading reading;
        reading.counter_labels = {"reason"};
        // JSON names each by its heading: "migrations", "pages", ... "time_ms".
        reading.counter_columns = {{"MIGRATIONS", "count", 1, 0, ""},   {"PAGES", "pages", 1, 0, ""},
                                   {"FAILED", "failed", 1, 0, ""},      {"THP", "thp", 1, 0, ""},
                                   {"THP_FAILED", "thp_failed", 1, 0, ""}, {"THP_SPLIT", "thp_split", 1, 0, ""},
                                   {"TIMED", "timed", 1, 0, ""},        {"TIME (ms)", "time_ns", 1000000, 3, ""}};
        for (std::uint32_t slot = 0; slot < growth.size() && slot < NUMAMOVE_REASONS; slot++) {
            const auto& c = growth[slot]; // struct numamove_counts' members in order
            const std::string name = reason_name(slot);
            if (c.at(0) == 0 && name != numa_reason)
                continue;
            const std::vector<Label> labels{{"event", "migrate:mm_migrate_pages"}, {"reason", name}};
            reading.metrics.push_back({"count", "migrate_pages() calls that ended", "", labels, c.at(0)});
            reading.metrics.push_back({"pages", "pages migrated", "pages", labels, c.at(1)});
            reading.metrics.push_back({"failed", "pages not migrated", "pages", labels, c.at(2)});
            reading.metrics.push_back({"thp", "THPs migrated", "", labels, c.at(3)});
            reading.metrics.push_back({"thp_failed", "THPs not migrated", "", labels, c.at(4)});
            reading.metrics.push_back({"thp_split", "THPs split", "", labels, c.at(5)});
            reading.metrics.push_back({"timed", "calls whose start was seen", "", labels, c.at(6)});
            reading.metrics.push_back({"time_ns", "time in the timed calls", "ns", labels, c.at(7)});
        }
        return reading;
    }

    // libbpf-tools' line in text, or with --all-reasons the time and the table of every reason.
    void print(Drain drain, const CommonOptions& options, Output& out) override
    {
        if (options.json) {
            MetricCollector::print(drain, options, out);
            return;
        }
        const Reading reading = collect(drain);
        if (options_.all_reasons) {
            out.print("{}\n", format_hms(std::time(nullptr)));
            render_text(reading, out);
            return;
        }
        std::uint64_t migrations = 0, ns = 0;
        for (const auto& m : reading.metrics) {
            if (m.labels.at(1).value != numa_reason)
                continue;
            if (m.name == "count")
                migrations = std::get<std::uint64_t>(m.value);
            else if (m.name == "time_ns")
                ns = std::get<std::uint64_t>(m.value);
        }
        if (!header_printed_) {
            out.print("{:<10} {:>18} {:>18}\n", "TIME", "NUMA_migrations", "NUMA_migrations_ms");
            header_printed_ = true;
        }
        out.print("{:<10} {:>18} {:>18}\n", format_hms(std::time(nullptr)), migrations, ns / 1000000);
    }

private:
    static Skeleton<numamove_bpf> opened(const Cli& cli)
    {
        auto skel = Skeleton<numamove_bpf>::open(cli.name());
        apply_task_filters(*skel, cli.options());
        return skel;
    }

    std::string reason_name(std::uint32_t slot) const
    {
        auto it = names_.find(slot);
        if (it != names_.end())
            return it->second;
        return slot == NUMAMOVE_REASONS - 1 ? "other" : std::to_string(slot);
    }

    Options options_;
    std::map<std::uint32_t, std::string> names_;
    ArrayGrowth counts_;
    bool header_printed_ = false;
};

} // namespace

void add_options(Cli& cli, Options& options)
{
    cli.flag("--all-reasons", options.all_reasons,
             "a table of every reason's migrations each second (compaction, syscall, "
             "numa_misplaced, ...), not the NUMA reason's line alone");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<Collector>(cli, options);
}

} // namespace tpkit::numamove
