// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/softirqs.hpp"

#include <tpkit/tools/softirqs.h>
#include "softirqs.skel.h"

#include <cctype>
#include <fstream>

namespace tpkit::softirqs {
namespace {

// The vectors' names in the kernel's order, as /proc/softirqs lists them ("NET_RX:"), in lower
// case as bcc prints them.
std::vector<std::string> vector_names()
{
    std::vector<std::string> names;
    std::ifstream proc("/proc/softirqs");
    std::string line;
    std::getline(proc, line); // the CPUs
    while (std::getline(proc, line)) {
        std::string name;
        for (char c : line) {
            if (c == ':')
                break;
            if (c != ' ')
                name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        names.push_back(name);
    }
    return names;
}

} // namespace

void add_options(Cli& cli, Options& options)
{
    irq_tables::add_options(cli, options, "-C,--count");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<irq_tables::Collector<softirqs_bpf, std::uint32_t>>(
        cli, options, SOFTIRQS_MAX_VECTORS,
        irq_tables::Describe<std::uint32_t>{
            "irq:softirq_exit", "softirq", "time in softirqs",
            [names = vector_names()](std::uint32_t vector) {
                return vector < names.size() ? names[vector] : "vector " + std::to_string(vector);
            }});
}

} // namespace tpkit::softirqs
