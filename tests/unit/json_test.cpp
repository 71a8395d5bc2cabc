// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/support/json.hpp"

#include <gtest/gtest.h>

namespace {

std::string quoted(std::string_view s)
{
    std::string out;
    tpkit::append_json_string(out, s);
    return out;
}

} // namespace

TEST(Json, ObjectMembersInOrder)
{
    EXPECT_EQ(tpkit::JsonObject().str(), "{}");
    EXPECT_EQ(tpkit::JsonObject()
                  .add("pid", 42)
                  .add("neg", -7)
                  .add("big", std::uint64_t(18446744073709551615ull))
                  .add("comm", "sh")
                  .add("thread", false)
                  .add("ratio", 0.5)
                  .add_raw("list", "[1,2]")
                  .str(),
              R"({"pid":42,"neg":-7,"big":18446744073709551615,"comm":"sh","thread":false,"ratio":0.5,"list":[1,2]})");
}

TEST(Json, EscapesQuotesBackslashesAndControls)
{
    EXPECT_EQ(quoted("a\"b\\c"), R"("a\"b\\c")");
    EXPECT_EQ(quoted("tab\tnl\n"), R"("tab\tnl\n")");
    EXPECT_EQ(quoted(std::string_view("\x01\x1f\x7f", 3)), R"("\u0001\u001f\u007f")");
    EXPECT_EQ(quoted(std::string_view("a\0b", 3)), R"("a\u0000b")");
}

TEST(Json, KeepsWellFormedUtf8AndEscapesEverythingElse)
{
    EXPECT_EQ(quoted("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x9d"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x9d\"");
    EXPECT_EQ(quoted("\xff"), R"("\u00ff")");          // never valid
    EXPECT_EQ(quoted("\xc3"), R"("\u00c3")");          // truncated
    EXPECT_EQ(quoted("\xc0\xaf"), R"("\u00c0\u00af")"); // overlong '/'
    EXPECT_EQ(quoted("\xe0\x80\x80"), R"("\u00e0\u0080\u0080")");  // overlong
    EXPECT_EQ(quoted("\xed\xa0\x80"), R"("\u00ed\u00a0\u0080")");  // surrogate
    EXPECT_EQ(quoted("\xf0\x80\x80\x80"), R"("\u00f0\u0080\u0080\u0080")"); // overlong
    EXPECT_EQ(quoted("\xf4\x90\x80\x80"), R"("\u00f4\u0090\u0080\u0080")"); // > U+10FFFF
}

TEST(Json, NonFiniteNumbersBecomeNull)
{
    EXPECT_EQ(tpkit::JsonObject().add("x", 1.0 / 0.0).str(), R"({"x":null})");
}
