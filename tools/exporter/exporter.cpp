// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "exporter.hpp"

#include <tpkit/bpf/maps.hpp>
#include <tpkit/support/version.hpp>

#include <bpf/libbpf.h>
#include <fmt/core.h>

#include <chrono>
#include <fstream>
#include <map>

namespace tpkit::exporter {

namespace {

double now_seconds()
{
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

bool bpf_stats_enabled()
{
    std::ifstream file("/proc/sys/kernel/bpf_stats_enabled");
    int on = 0;
    return file >> on && on == 1;
}

MetricFamily family(std::string name, std::string help, MetricType type, std::string unit = {})
{
    return {std::move(name), std::move(help), std::move(unit), type, {}};
}

} // namespace

void Exporter::apply(const Config& config)
{
    // Only this thread changes the set of sources; scrapes only read it. New sources first: if
    // one fails, they are unloaded and the running set is untouched.
    auto running = [&](const MetricConfig& m) {
        return std::find_if(sources_.begin(), sources_.end(),
                            [&](const auto& s) { return s && s->config().canonical == m.canonical; });
    };
    std::vector<std::unique_ptr<Source>> added;
    for (const MetricConfig& m : config.metrics)
        if (running(m) == sources_.end())
            added.push_back(std::make_unique<Source>(m));

    std::vector<std::unique_ptr<Source>> old;
    {
        std::lock_guard lock(mutex_);
        std::vector<std::unique_ptr<Source>> next;
        auto fresh = added.begin();
        for (const MetricConfig& m : config.metrics) {
            auto kept = running(m);
            next.push_back(kept != sources_.end() ? std::move(*kept) : std::move(*fresh++));
        }
        old = std::exchange(sources_, std::move(next));
        last_reload_ok_ = true;
        last_reload_time_ = now_seconds();
    }
    // Sources no longer configured detach here, outside the lock.
}

void Exporter::reload_failed()
{
    std::lock_guard lock(mutex_);
    last_reload_ok_ = false;
}

std::string Exporter::scrape(ExpositionFormat format)
{
    const auto start = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    scrapes_[static_cast<int>(format)]++;
    std::vector<MetricFamily> families;
    for (auto& source : sources_)
        source->scrape(families);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (auto& f : self_metrics(seconds))
        families.push_back(std::move(f));
    return render_exposition(families, format);
}

std::vector<MetricFamily> Exporter::self_metrics(double scrape_seconds) const
{
    auto build = family("tpkit_exporter_build_info", "tpkit-exporter's version, commit and libbpf",
                        MetricType::gauge);
    build.series.push_back({{{"version", std::string(version())},
                             {"commit", std::string(git_commit())},
                             {"libbpf", fmt::format("{}.{}", libbpf_major_version(),
                                                    libbpf_minor_version())}},
                            1.0});
    auto duration = family("tpkit_exporter_scrape_duration_seconds",
                           "Time this scrape took to read every metric's maps",
                           MetricType::gauge, "seconds");
    duration.series.push_back({{}, scrape_seconds});
    auto reload_ok = family("tpkit_exporter_config_last_reload_successful",
                            "Whether the last configuration (re)load succeeded", MetricType::gauge);
    reload_ok.series.push_back({{}, last_reload_ok_ ? 1.0 : 0.0});
    auto reload_time = family("tpkit_exporter_config_last_reload_success_timestamp_seconds",
                              "When the running configuration was loaded", MetricType::gauge,
                              "seconds");
    reload_time.series.push_back({{}, last_reload_time_});

    auto map_memory = family("tpkit_exporter_map_memory_bytes",
                             "Kernel memory the loaded metrics' maps take, as counted against "
                             "--max-map-memory (during a reload, the old and the new ones)",
                             MetricType::gauge, "bytes");
    map_memory.series.push_back({{}, static_cast<double>(map_memory_charged())});
    auto scrapes = family("tpkit_exporter_scrapes", "Scrapes served, by exposition format",
                          MetricType::counter);
    scrapes.series.push_back({{{"format", "prometheus"}},
                              static_cast<double>(scrapes_[static_cast<int>(ExpositionFormat::prometheus)])});
    scrapes.series.push_back({{{"format", "openmetrics"}},
                              static_cast<double>(scrapes_[static_cast<int>(ExpositionFormat::openmetrics)])});
    auto uncounted = family("tpkit_exporter_uncounted_events",
                            "Events a metric could not count: maps full, values outside every bucket",
                            MetricType::counter);
    auto limited = family("tpkit_exporter_series_limit_events",
                          "Events of series beyond a metric's max_series, left out of it",
                          MetricType::counter);
    auto skipped = family("tpkit_exporter_skipped_runs",
                          "Runs of a metric's BPF programs that the kernel skipped while another BPF "
                          "program ran on that CPU: the events of those runs are not counted",
                          MetricType::counter);
    auto programs = family("tpkit_exporter_programs_attached",
                           "BPF programs loaded and attached for a metric", MetricType::gauge);
    auto runs = family("tpkit_exporter_bpf_program_runs",
                       "Runs of a BPF program (while kernel.bpf_stats_enabled is 1)",
                       MetricType::counter);
    auto run_time = family("tpkit_exporter_bpf_program_run_seconds",
                           "Time in a BPF program (while kernel.bpf_stats_enabled is 1)",
                           MetricType::counter, "seconds");
    const bool stats = bpf_stats_enabled();
    for (const auto& source : sources_) {
        const std::vector<Label> metric{{"metric", source->config().name}};
        uncounted.series.push_back({metric, static_cast<double>(source->uncounted())});
        limited.series.push_back({metric, static_cast<double>(source->over_series_limit())});
        auto progs = program_stats(source->collector().objects());
        programs.series.push_back({metric, static_cast<double>(progs.size())});
        std::uint64_t misses = 0;
        for (const ProgramStats& p : progs)
            misses += p.recursion_misses;
        skipped.series.push_back({metric, static_cast<double>(misses)});
        if (!stats)
            continue;
        // One series per program name: an engine loads the same program once per event.
        std::map<std::string, ProgramStats> by_name;
        for (const ProgramStats& p : progs) {
            ProgramStats& sum = by_name[p.name];
            sum.runs += p.runs;
            sum.run_time_ns += p.run_time_ns;
        }
        for (const auto& [name, p] : by_name) {
            std::vector<Label> labels = metric;
            labels.push_back({"program", name});
            runs.series.push_back({labels, static_cast<double>(p.runs)});
            run_time.series.push_back({labels, static_cast<double>(p.run_time_ns) * 1e-9});
        }
    }
    std::vector<MetricFamily> out{build,   duration,  reload_ok, reload_time, map_memory,
                                  scrapes, uncounted, limited,   skipped,     programs};
    if (stats) {
        out.push_back(std::move(runs));
        out.push_back(std::move(run_time));
    }
    return out;
}

} // namespace tpkit::exporter
