// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// bcc's short flags. For every tool libbpf-tools also has, each short flag libbpf-tools defines
// (src/cli/bcc_short_flags.tsv, read from its argp tables by cmake/bcc-short-flags.sh) means the same
// in tpkit: tpkit's option of that letter has bcc's long name among its names. Where it has no
// option of that letter, or one bcc names otherwise, docs/coming-from-bcc.md says so and why:
// its tables list exactly those letters, no fewer and none that no longer differ.
#include "live.hpp"
#include "tool_run.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

struct BccFlag {
    std::string tool;
    char letter;
    std::string long_name; // "-" for none
    std::string help;
};

std::vector<BccFlag> bcc_flags()
{
    std::ifstream table(std::string(TPKIT_SOURCE_DIR) + "/src/cli/bcc_short_flags.tsv");
    std::vector<BccFlag> flags;
    for (std::string line; std::getline(table, line);) {
        if (line.empty() || line[0] == '#')
            continue;
        std::vector<std::string> fields;
        std::istringstream in(line);
        for (std::string field; std::getline(in, field, '\t');)
            fields.push_back(field);
        if (fields.size() == 5 && fields[1].size() == 1)
            flags.push_back({fields[0], fields[1][0], fields[2], fields[4]});
    }
    return flags;
}

// A tool's short flags, each with all the long names of its option, from --completion-options.
std::map<char, std::set<std::string>> tpkit_short_flags(const std::string& tool)
{
    ToolRun list({tpkit::live::tool_path(tool), "--completion-options"});
    EXPECT_EQ(list.wait(10s), 0) << tool << ": " << list.stderr_text();
    std::map<char, std::set<std::string>> flags;
    for (const std::string& line : list.lines()) {
        std::vector<char> letters;
        std::set<std::string> long_names;
        std::istringstream names(line.substr(0, line.find(" ="))); // then what completes a value
        for (std::string name; names >> name;) {
            if (name.size() == 2 && name[0] == '-' && name[1] != '-')
                letters.push_back(name[1]);
            else if (name.rfind("--", 0) == 0)
                long_names.insert(name.substr(2));
        }
        for (char letter : letters)
            flags[letter] = long_names;
    }
    return flags;
}

// The rows of docs/coming-from-bcc.md's tables under `heading`: "| tool | `-X` …", as "tool -X".
std::set<std::string> documented(const std::string& heading)
{
    std::ifstream doc(std::string(TPKIT_SOURCE_DIR) + "/docs/coming-from-bcc.md");
    EXPECT_TRUE(doc.good());
    const std::regex row(R"(^\| *([a-z0-9]+) *\| *`-(\S)[` ])");
    std::set<std::string> rows;
    bool inside = false;
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("#", 0) == 0)
            inside = line.find(heading) != std::string::npos;
        std::smatch m;
        if (inside && std::regex_search(line, m, row))
            rows.insert(m[1].str() + " -" + m[2].str());
    }
    return rows;
}

} // namespace

TEST(BccFlags, EveryLetterMeansWhatItMeansInBccOrIsDocumented)
{
    constexpr std::size_t many_flags = 150; // a floor: the table has more rows
    const std::vector<BccFlag> flags = bcc_flags();
    ASSERT_GT(flags.size(), many_flags) << "src/cli/bcc_short_flags.tsv not read";
    std::set<std::string> tools;
    for (const BccFlag& flag : flags)
        tools.insert(flag.tool);
    std::map<std::string, std::map<char, std::set<std::string>>> tpkit;
    for (const std::string& tool : tools)
        tpkit[tool] = tpkit_short_flags(tool);

    std::set<std::string> missing, renamed, clashes;
    std::size_t same = 0;
    for (const BccFlag& flag : flags) {
        const std::string key = flag.tool + " -" + flag.letter;
        const auto& ours = tpkit[flag.tool];
        const auto option = ours.find(flag.letter);
        if (option == ours.end())
            missing.insert(key);
        else if (option->second.contains(flag.long_name))
            ++same;
        else
            renamed.insert(key + " (bcc: --" + flag.long_name + ", " + flag.help + ")");
    }
    // Most letters are bcc's, by construction of the common options and by the tools' own.
    EXPECT_GT(same, many_flags);

    const std::set<std::string> documented_missing = documented("Flags bcc has and tpkit does not");
    const std::set<std::string> documented_renamed = documented("Same letter, same meaning, another name");
    for (const std::string& key : missing)
        EXPECT_TRUE(documented_missing.contains(key))
            << key << ": bcc has it, tpkit does not, and docs/coming-from-bcc.md does not say so";
    for (const std::string& key : documented_missing)
        EXPECT_TRUE(missing.contains(key)) << key << ": documented as missing, but tpkit has it";
    std::set<std::string> renamed_keys;
    for (const std::string& clash : renamed) {
        const std::string key = clash.substr(0, clash.find(" ("));
        renamed_keys.insert(key);
        EXPECT_TRUE(documented_renamed.contains(key))
            << clash << ": tpkit's option of this letter has none of bcc's long names";
    }
    for (const std::string& key : documented_renamed)
        EXPECT_TRUE(renamed_keys.contains(key)) << key << ": documented as renamed, but it is not";
}
