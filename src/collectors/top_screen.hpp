// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What bcc's top-style tools (biotop, slabratetop, tcptop) print above each table: the screen
// cleared, where there is one, and the time of day with /proc/loadavg.
#pragma once

#include <tpkit/output/output.hpp>
#include <tpkit/process/clock.hpp>

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

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

// A top table's rows: in `first` order (ties keep the map's order), at most `most` of them
// (bcc's -r).
template <class Row, class First>
void keep_top_rows(std::vector<Row>& rows, First first, std::size_t most)
{
    std::stable_sort(rows.begin(), rows.end(), first);
    if (rows.size() > most)
        rows.resize(most);
}

} // namespace tpkit
