// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// --version: project()'s VERSION, the git commit and the libbpf loaded, as a tool prints them.
#include <tpkit/support/version.hpp>

#include <bpf/libbpf.h>
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace {

std::string run(const std::string& command)
{
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe)
        return out;
    char buffer[256];
    while (std::size_t n = std::fread(buffer, 1, sizeof(buffer), pipe))
        out.append(buffer, n);
    pclose(pipe);
    return out;
}

TEST(Version, IsTheProjectVersion)
{
    EXPECT_EQ(tpkit::version(), TPKIT_PROJECT_VERSION);
}

TEST(Version, CommitIsAbbreviatedHashOrUnknown)
{
    std::string commit(tpkit::git_commit());
    if (commit.ends_with("-dirty"))
        commit.resize(commit.size() - 6);
    if (commit != "unknown") {
        EXPECT_EQ(commit.size(), 12u) << commit;
        EXPECT_EQ(commit.find_first_not_of("0123456789abcdef"), std::string::npos) << commit;
    }
}

TEST(Version, ToolPrintsVersionCommitAndLoadedLibbpf)
{
    std::string expected =
        fmt::format("tpgen (tpkit) {}\ncommit {}\nlibbpf {}.{}\n", TPKIT_PROJECT_VERSION,
                    tpkit::git_commit(), libbpf_major_version(), libbpf_minor_version());
    EXPECT_EQ(run(std::string(TPKIT_TPGEN) + " --version"), expected);
    // Before any required argument is checked, like --help.
    EXPECT_EQ(run(std::string(TPKIT_TPGEN) + " --version --no-such-option 2>&1 >/dev/null"), "");
}

} // namespace
