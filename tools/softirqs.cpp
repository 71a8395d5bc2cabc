// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// softirqs: time in (or count of) softirqs per vector, counted in the kernel; bcc's softirqs.
#include "softirqs.h"
#include "softirqs.skel.h"

#include "irq_tables.hpp"

#include <cctype>
#include <fstream>

namespace {

constexpr const char* examples = R"(  softirqs                  # total time in each softirq vector, at Ctrl-C
  softirqs -C 1             # how many of each, every second
  softirqs -d               # histograms of their times, per vector
  softirqs -c 1             # only on CPU 1
  softirqs -NT 1 10         # every second, ten times, in nanoseconds, with the time
  softirqs --json --duration 5
)";

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

int main(int argc, char** argv)
{
    return tpkit::irq_tables::tool_main<softirqs_bpf, std::uint32_t>(
        argc, argv, "softirqs",
        "Summarize softirq time, or counts, per vector (irq:softirq_entry and softirq_exit). "
        "-p, -t, -u, --cgroup and --comm select the task a softirq interrupted.",
        examples, SOFTIRQS_MAX_VECTORS, [] {
            return tpkit::irq_tables::Describe<std::uint32_t>{
                "irq:softirq_exit", "softirq", "time in softirqs",
                [names = vector_names()](std::uint32_t vector) {
                    return vector < names.size() ? names[vector]
                                                 : "vector " + std::to_string(vector);
                }};
        });
}
