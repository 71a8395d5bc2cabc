// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What bcc's top-style tools (biotop, slabratetop, tcptop) print above each table: the screen
// cleared, where there is one, and the time of day with /proc/loadavg.
#pragma once

#include <tpkit/output/output.hpp>
#include <tpkit/process/clock.hpp>

#include <fmt/core.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string>

namespace tpkit {

class TopScreen {
public:
    // no_clear: bcc's -C. A screen is cleared only when stdout is a terminal.
    explicit TopScreen(bool no_clear) : clear_(!no_clear && isatty(STDOUT_FILENO)) {}

    // Before each text table: the clearing, then "HH:MM:SS loadavg: …" unless `summary` is off
    // (tcptop's -S).
    void heading(Output& out, bool summary = true) const
    {
        if (clear_)
            out.append("\033[H\033[2J");
        if (!summary)
            return;
        std::ifstream in("/proc/loadavg");
        std::string load;
        std::getline(in, load);
        out.append(fmt::format("{} loadavg: {}\n", format_hms(std::time(nullptr)), load));
    }

private:
    bool clear_;
};

} // namespace tpkit
