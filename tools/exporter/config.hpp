// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpkit-exporter's configuration: which metrics to serve, read from YAML.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tpkit::exporter {

enum class SourceKind { count, hist, tool };

// One configured metric. Its Prometheus name is tpkit_<name>[_<unit>][_total].
struct MetricConfig {
    std::string name;
    std::string help;
    std::string unit;                 // empty: the source's own (seconds for times, bytes)
    std::optional<double> multiplier; // from the source's unit to `unit`
    SourceKind kind = SourceKind::count;
    std::vector<std::string> events; // count: one or more (globs); hist: one
    std::string field;               // hist
    std::string by;
    std::string filter;
    std::string linear;      // hist: "MIN,MAX,STEP"
    unsigned loglinear = 0;  // hist: sub-bucket bits
    std::string tool;        // tool: its name
    std::vector<std::string> args; // the tool's options, or task filters of count and hist
    std::size_t max_series = 1000;

    std::string file;
    std::map<std::string, int> lines; // key → line, for messages
    std::string canonical;            // the entry as parsed: an unchanged one survives a reload

    // "FILE:LINE: metric NAME: key 'KEY': " — the prefix of an error about `key`.
    std::string where(const std::string& key) const;
};

struct Config {
    std::string file;
    std::vector<MetricConfig> metrics;
};

// Reads and checks the file's shape: one YAML document, known keys each given once, one source
// per metric, valid and unique names.
// Any problem → Error(usage), one line naming the file, line and key.
Config load_config(const std::string& path);

} // namespace tpkit::exporter
