// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// hardirqs: time in (or count of) hard IRQ handlers per name, counted in the kernel; bcc's
// hardirqs.
#include "hardirqs.hpp"

namespace {

constexpr const char* examples = R"(  hardirqs                  # total time in each IRQ handler, at Ctrl-C
  hardirqs --count 1        # how many of each, every second
  hardirqs -d               # histograms of their times, per handler
  hardirqs -s 1             # only on CPU 1
  hardirqs -NT 1 10         # every second, ten times, in nanoseconds, with the time
  hardirqs --json --duration 5
)";

} // namespace

int main(int argc, char** argv)
{
    return tpkit::irq_tables::tool_main(
        argc, argv, "hardirqs",
        "Summarize hard IRQ handler time, or counts, per handler name (irq:irq_handler_entry "
        "and irq_handler_exit; the names of /proc/interrupts). -p, -t, -u, --cgroup and --comm "
        "select the task an IRQ interrupted.",
        examples, tpkit::hardirqs::add_options, tpkit::hardirqs::open);
}
