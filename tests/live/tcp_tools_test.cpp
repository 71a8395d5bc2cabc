// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What the TCP tools share on their command lines.
#include "tool_run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;

// A bad port, for every TCP tool's port options: one line naming the tool, the usage exit code.
TEST(TcpToolsBadPort, OneLineExitTwo)
{
    const std::vector<std::vector<std::string>> runs{
        {"tcpstates", "-L", "0"},       {"tcpstates", "-D", "65536"}, {"tcplife", "-L", "80,x"},
        {"tcplife", "-D", "80,,443"},   {"tcpconnect", "-P", "-1"},   {"tcpaccept", "-P", "1,2,3,4,5,6,7,8,9"},
    };
    for (const auto& run : runs) {
        SCOPED_TRACE(run[0] + " " + run[1] + " " + run[2]);
        tpkit::live::ToolRun tool({tpkit::live::tool_path(run[0]), run[1], run[2]});
        EXPECT_EQ(tool.wait(10s), 2);
        const std::string& err = tool.stderr_text();
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_EQ(err.rfind(run[0] + ": ", 0), 0u) << err;
    }
}
