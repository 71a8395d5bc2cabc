// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpkit: every tool in one executable. `tpkit TOOL [ARGS]`, or run under a tool's name (the
// packages' links: forksnoop -> tpkit) to be that tool.
#include "tpkit/version.hpp"

#include <fmt/core.h>

#include <cstring>
#include <string_view>

// tpkit_tools.inc: TPKIT_TOOL("forksnoop", tpkit_main_forksnoop) for each tool, from CMake.
#define TPKIT_TOOL(name, function) int function(int argc, char** argv);
#include "tpkit_tools.inc"
#undef TPKIT_TOOL

namespace {

struct Tool {
    std::string_view name;
    int (*main)(int argc, char** argv);
};

constexpr Tool tools[] = {
#define TPKIT_TOOL(name, function) {name, function},
#include "tpkit_tools.inc"
#undef TPKIT_TOOL
};

const Tool* find_tool(std::string_view name)
{
    for (const Tool& tool : tools)
        if (tool.name == name)
            return &tool;
    return nullptr;
}

void print_usage()
{
    fmt::print("Usage: tpkit TOOL [ARGS]   (or run a tool by its name: a link to tpkit)\n"
               "TOOL --help describes each one. Tools:\n");
    std::size_t column = 0;
    for (const Tool& tool : tools) {
        if (column + tool.name.size() + 1 > 78) {
            fmt::print("\n");
            column = 0;
        }
        fmt::print(" {}", tool.name);
        column += tool.name.size() + 1;
    }
    fmt::print("\n");
}

} // namespace

int main(int argc, char** argv)
{
    const char* slash = std::strrchr(argv[0], '/');
    std::string_view called = slash ? slash + 1 : argv[0];
    if (const Tool* tool = find_tool(called))
        return tool->main(argc, argv);
    if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
        print_usage();
        return argc < 2 ? 2 : 0;
    }
    if (std::string_view(argv[1]) == "--version") {
        fmt::print("{}", tpkit::version_text("tpkit"));
        return 0;
    }
    if (const Tool* tool = find_tool(argv[1]))
        return tool->main(argc - 1, argv + 1);
    fmt::print(stderr, "tpkit: no tool named '{}' (tpkit --help lists them)\n", argv[1]);
    return 2;
}
