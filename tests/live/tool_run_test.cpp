// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The live test kit's JSON readers: what the tools' --json lines are checked with must itself
// accept exactly one JSON object and read its members right.
#include "tool_run.hpp"

#include <gtest/gtest.h>

using tpkit::live::json_object_problem;
using tpkit::live::parse_flat_json;

TEST(LiveKitJson, OneObjectPasses)
{
    EXPECT_EQ(json_object_problem(R"({"pid":1,"comm":"sh","args":["a b","\"q\""],"x":null})"), "");
    EXPECT_EQ(json_object_problem(" {\"a\":{\"b\":[1,2.5e3,true]}}\n"), "");
}

TEST(LiveKitJson, AnythingElseIsAProblem)
{
    for (const char* bad : {"", "[1]", "{\"a\":1} {\"b\":2}", "{\"a\":1,}", "{'a':1}",
                            "{\"a\":01}", "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", "{\"a\":1,\"a\":2}",
                            "{\"o\":{\"k\":1,\"k\":1}}"})
        EXPECT_NE(json_object_problem(bad), "") << bad;
}

TEST(LiveKitJson, MembersAsText)
{
    auto members = parse_flat_json(R"(lost: {"s":"a\"b\\c\u00e9","n":-7,"f":0.5,"l":[{"low":1}],"z":null})");
    EXPECT_EQ(members["s"], "a\"b\\c\xc3\xa9");
    EXPECT_EQ(members["n"], "-7");
    EXPECT_EQ(members["f"], "0.5");
    EXPECT_EQ(members["l"], R"([{"low":1}])");
    EXPECT_EQ(members["z"], "null");
    EXPECT_TRUE(parse_flat_json("12 events lost").empty());
}
