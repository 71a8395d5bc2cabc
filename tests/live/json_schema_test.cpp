// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The schema check the cross-tool test runs on every tool's --json lines: what it refuses.
#include "json_schema.hpp"

#include <gtest/gtest.h>

using tpkit::live::JsonSchema;

TEST(JsonSchemaCheck, TakesEachTypeAsDocumented)
{
    JsonSchema schema;
    EXPECT_EQ(schema.problem("a", R"({"type":"event","time_ns":1,"pid":2,"comm":"sh","cpu":0})"), "");
    EXPECT_EQ(schema.problem("a", R"({"type":"count","time_ns":1,"syscall":"read","count":5})"), "");
    EXPECT_EQ(schema.problem("a", R"({"type":"hist","time_ns":1,"event":"a:b","field":"f","unit":"",)"
                                  R"("cpu":0,"key":"0","buckets":[{"low":0,"high":1,"count":2}],)"
                                  R"("total":2,"p50":{"low":0,"high":1},"p90":null,"p99":null})"),
              "");
    EXPECT_EQ(schema.problem("a", R"({"type":"lost","lost_events":0})"), "");
    EXPECT_EQ(schema.problem("a", R"({"type":"tracepoint","event":"a:b","id":7})"), "");
}

TEST(JsonSchemaCheck, RefusesWhatBreaksIt)
{
    JsonSchema schema;
    EXPECT_EQ(schema.problem("a", R"({"time_ns":1,"type":"event"})"), "\"type\" is not its first member");
    EXPECT_EQ(schema.problem("a", R"({"type":"row","time_ns":1})"), "unknown type \"row\"");
    EXPECT_EQ(schema.problem("a", R"({"type":"event","pid":1})"), "a event line without \"time_ns\"");
    EXPECT_EQ(schema.problem("a", R"({"type":"event","time_ns":"1"})"), "\"time_ns\" is string, not integer");
    EXPECT_EQ(schema.problem("a", R"({"type":"event","time_ns":1,"cpu":"0"})"), "\"cpu\" is string, not integer");
    EXPECT_EQ(schema.problem("a", R"({"type":"hist","time_ns":1,"event":"a:b","field":"f","unit":"",)"
                                  R"("buckets":[{"low":0,"count":2}],"total":2,"p50":null,"p90":null,"p99":null})"),
              R"(bucket {"low":0,"count":2}: 2 members, not 3)");
    EXPECT_EQ(schema.problem("a", "[1]"), "not a JSON object");
}

TEST(JsonSchemaCheck, KeepsOneTypePerKeyAcrossTools)
{
    JsonSchema schema;
    EXPECT_EQ(schema.problem("one", R"({"type":"event","time_ns":1,"flags":"RW"})"), "");
    EXPECT_EQ(schema.problem("two", R"({"type":"event","time_ns":1,"flags":3})"),
              "\"flags\" is integer here, string in one");
    EXPECT_EQ(schema.problem("two", R"({"type":"event","time_ns":1,"flags":null})"), "");
}
