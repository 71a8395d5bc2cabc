// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// docs/embedding.md shows examples/embed/forkwatch.cpp, which the embed test builds and runs:
// the page must hold the file verbatim, so that the example readers copy is one that works.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

const std::filesystem::path source_dir = std::filesystem::path(TPKIT_TEST_DATA) / ".." / "..";

std::string read_file(const std::filesystem::path& path)
{
    std::ifstream in(path);
    EXPECT_TRUE(in) << "cannot read " << path;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

TEST(EmbeddingDoc, ShowsTheBuiltExampleVerbatim)
{
    std::string doc = read_file(source_dir / "docs" / "embedding.md");
    std::string example = read_file(source_dir / "examples" / "embed" / "forkwatch.cpp");
    ASSERT_FALSE(example.empty());
    EXPECT_NE(doc.find("```cpp\n" + example + "```\n"), std::string::npos)
        << "docs/embedding.md does not show examples/embed/forkwatch.cpp as it is; paste the file "
           "into its ```cpp block";
}
