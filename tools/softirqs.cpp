// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// softirqs: time in (or count of) softirqs per vector, counted in the kernel; bcc's softirqs.
#include "softirqs.hpp"

namespace {

constexpr const char* examples = R"(  softirqs                  # total time in each softirq vector, at Ctrl-C
  softirqs -C 1             # how many of each, every second
  softirqs -d               # histograms of their times, per vector
  softirqs -c 1             # only on CPU 1
  softirqs -NT 1 10         # every second, ten times, in nanoseconds, with the time
  softirqs --json --duration 5
)";

} // namespace

int main(int argc, char** argv)
{
    return tpkit::irq_tables::tool_main(
        argc, argv, "softirqs",
        "Summarize softirq time, or counts, per vector (irq:softirq_entry and softirq_exit). "
        "-p, -t, -u, --cgroup and --comm select the task a softirq interrupted.",
        examples, tpkit::softirqs::add_options, tpkit::softirqs::open);
}
