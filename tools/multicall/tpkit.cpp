// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpkit: every tool in one executable. `tpkit TOOL [ARGS]`, or run under a tool's name (the
// packages' links: forksnoop -> tpkit) to be that tool.
#include "tpkit/support/error.hpp"
#include "tpkit/support/version.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>
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

// TOOL: its man page's summary (tpkit_summaries.inc, made by cmake/gen-tool-summaries.cmake).
struct Summary {
    std::string_view tool;
    std::string_view text;
};

constexpr Summary summaries[] = {
#include "tpkit_summaries.inc"
};

void print_usage()
{
    std::vector<Summary> sorted(std::begin(summaries), std::end(summaries));
    std::sort(sorted.begin(), sorted.end(),
              [](const Summary& a, const Summary& b) { return a.tool < b.tool; });
    fmt::print("Usage: tpkit TOOL [ARGS]   (or run a tool by its name: a link to tpkit)\n"
               "TOOL --help describes each one. Tools:\n");
    // A line each: a long summary ends before its last aside or clause that fits, else at a word.
    constexpr std::size_t width = 64;
    for (const Summary& summary : sorted) {
        std::string text(summary.text);
        if (text.rfind('(') != std::string::npos && text.rfind(')') < text.rfind('('))
            text.erase(text.rfind(" (")); // an aside the first sentence cut short
        if (text.size() > width) {
            const std::string_view fits = std::string_view(text).substr(0, width);
            const std::size_t aside = fits.rfind(" ("), clause = fits.rfind(", ");
            if (aside != std::string_view::npos || clause != std::string_view::npos)
                text.erase(std::max(aside == std::string_view::npos ? 0 : aside,
                                    clause == std::string_view::npos ? 0 : clause));
            else
                text = std::string(fits.substr(0, fits.rfind(' '))) + "…";
        }
        fmt::print("  {:<13} {}\n", summary.tool, text);
    }
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
    std::vector<std::string> names;
    for (const Tool& tool : tools)
        names.emplace_back(tool.name);
    const std::string nearest = tpkit::nearest_name(argv[1], names);
    fmt::print(stderr, "tpkit: no tool named '{}'{} (tpkit --help lists them)\n", argv[1],
               nearest.empty() ? "" : fmt::format(", did you mean {}?", nearest));
    return 2;
}
