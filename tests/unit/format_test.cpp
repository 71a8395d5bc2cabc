// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "reference_data.hpp"
#include "tpkit/kernel/format.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace fs = std::filesystem;
using tpkit::FieldKind;
using tpkit::test::events_of_6_1;
using tpkit::test::events_of_6_12;
using tpkit::test::events_of_6_18;

namespace {

fs::path formats(const char* kernel) { return fs::path(TPKIT_FORMATS_DIR) / kernel; }

std::size_t parse_all(const fs::path& root, std::size_t& fields)
{
    std::size_t events = 0;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (entry.path().filename() != "format")
            continue;
        tpkit::EventFormat f = tpkit::read_format(entry.path());
        EXPECT_FALSE(f.name.empty()) << entry.path();
        EXPECT_EQ(f.name, entry.path().parent_path().filename().string()) << entry.path();
        EXPECT_EQ(f.system, entry.path().parent_path().parent_path().filename().string());
        EXPECT_GE(f.fields.size(), 4u) << entry.path(); // the common_* fields at least
        EXPECT_EQ(f.fields[0].name, "common_type");
        for (const auto& field : f.fields) {
            bool flexible_array = field.kind == FieldKind::array && field.array_len == 0;
            EXPECT_EQ(field.size == 0, flexible_array) << entry.path() << " " << field.name;
            if (field.kind == FieldKind::array && field.array_len) {
                EXPECT_EQ(field.size % field.array_len, 0u) << entry.path() << " " << field.name;
            }
        }
        fields += f.fields.size();
        ++events;
    }
    return events;
}

} // namespace

TEST(FormatParser, ParsesEveryEventOfEachReferenceKernel)
{
    std::size_t fields_61 = 0, fields_612 = 0, fields_618 = 0;
    EXPECT_EQ(parse_all(formats("linux-6.1"), fields_61), events_of_6_1);
    EXPECT_EQ(parse_all(formats("linux-6.12"), fields_612), events_of_6_12);
    EXPECT_EQ(parse_all(formats("linux-6.18"), fields_618), events_of_6_18);
    constexpr std::size_t fields_an_event = 5; // on average, more than
    EXPECT_GT(fields_61, events_of_6_1 * fields_an_event);
    EXPECT_GT(fields_612, events_of_6_12 * fields_an_event);
    EXPECT_GT(fields_618, events_of_6_18 * fields_an_event);
}

TEST(FormatParser, ForkCommMovesFromInlineArrayToDataLoc)
{
    auto old = tpkit::read_format(formats("linux-6.1") / "sched/sched_process_fork/format");
    auto now = tpkit::read_format(formats("linux-6.18") / "sched/sched_process_fork/format");
    EXPECT_EQ(old.system, "sched");
    EXPECT_EQ(old.id, 308u);
    const auto* comm61 = old.field("parent_comm");
    ASSERT_NE(comm61, nullptr);
    EXPECT_EQ(comm61->kind, FieldKind::array);
    EXPECT_EQ(comm61->type, "char[16]");
    EXPECT_EQ(comm61->elem_type, "char");
    EXPECT_EQ(comm61->array_len, 16u);
    EXPECT_EQ(comm61->offset, 8u);
    EXPECT_TRUE(comm61->is_signed);
    EXPECT_TRUE(comm61->is_string());
    EXPECT_EQ(old.field("child_pid")->offset, 44u);
    EXPECT_EQ(old.fixed_size(), 48u);

    const auto* comm618 = now.field("parent_comm");
    ASSERT_NE(comm618, nullptr);
    EXPECT_EQ(comm618->kind, FieldKind::data_loc);
    EXPECT_EQ(comm618->type, "__data_loc char[]");
    EXPECT_EQ(comm618->size, 4u);
    EXPECT_TRUE(comm618->is_string());
    const auto* child = now.field("child_pid");
    EXPECT_EQ(child->offset, 20u);
    EXPECT_EQ(child->type, "pid_t");
    EXPECT_TRUE(child->is_signed);
    EXPECT_EQ(now.print_fmt.substr(0, 12), "\"comm=%s pid");
}

TEST(FormatParser, ForkCommOn612IsStillTheInlineArrayOfUnsignedChar)
{
    // 6.12 has 6.1's layout; only the sign differs: the kernel is built with -funsigned-char
    // since 6.2, and the format says so of every char.
    auto fork = tpkit::read_format(formats("linux-6.12") / "sched/sched_process_fork/format");
    EXPECT_EQ(fork.id, 304u);
    const auto* comm = fork.field("parent_comm");
    ASSERT_NE(comm, nullptr);
    EXPECT_EQ(comm->kind, FieldKind::array);
    EXPECT_EQ(comm->type, "char[16]");
    EXPECT_EQ(comm->array_len, 16u);
    EXPECT_EQ(comm->offset, 8u);
    EXPECT_FALSE(comm->is_signed);
    EXPECT_TRUE(comm->is_string());
    EXPECT_EQ(fork.field("child_comm")->offset, 28u);
    EXPECT_EQ(fork.field("child_pid")->offset, 44u);
    EXPECT_EQ(fork.fixed_size(), 48u);
    // sched_process_exit: 6.1's fields, without the group_dead 6.18 added.
    auto exit = tpkit::read_format(formats("linux-6.12") / "sched/sched_process_exit/format");
    EXPECT_EQ(exit.field("prio")->offset, 28u);
    EXPECT_EQ(exit.field("group_dead"), nullptr);
}

TEST(FormatParser, CommonFieldsAndPointers)
{
    auto f = tpkit::read_format(formats("linux-6.18") / "net/netif_receive_skb/format");
    ASSERT_EQ(f.fields.size(), 7u);
    EXPECT_TRUE(f.fields[3].common);
    EXPECT_EQ(f.fields[3].name, "common_pid");
    EXPECT_FALSE(f.field("len")->common);
    EXPECT_TRUE(f.field("skbaddr")->is_pointer());
    EXPECT_EQ(f.field("skbaddr")->type, "void *");
    EXPECT_EQ(f.field("len")->type, "unsigned int");
    EXPECT_FALSE(f.field("len")->is_signed);
    EXPECT_EQ(f.field("missing"), nullptr);
}

TEST(FormatParser, RelLocField)
{
    const char* text = "name: x\nID: 7\nformat:\n"
                       "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                       "\tfield:__rel_loc u8[] buf;\toffset:8;\tsize:4;\tsigned:0;\n"
                       "\nprint fmt: \"%s\", __get_rel_str(buf)\n";
    auto f = tpkit::parse_format(text, "x/format");
    EXPECT_EQ(f.field("buf")->kind, FieldKind::rel_loc);
    EXPECT_EQ(f.field("buf")->elem_type, "u8");
    EXPECT_FALSE(f.field("buf")->is_string());
}

TEST(FormatParser, MalformedInputNamesFileAndLine)
{
    auto error_of = [](const char* text) {
        try {
            tpkit::parse_format(text, "bad/format");
        } catch (const tpkit::FormatError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(error_of("name: x\nID: 1\nformat:\n\tfield:int a;\toffset:zz;\tsize:4;\tsigned:1;\n"),
              "bad/format:4: bad offset 'zz'");
    EXPECT_EQ(error_of("name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\n"),
              "bad/format:4: missing ';' after signed");
    EXPECT_EQ(error_of("name: x\nID: 1\nbogus line\n"), "bad/format:3: unexpected line 'bogus line'");
    EXPECT_EQ(error_of("name: x\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"
                       "print fmt: \"\"\n"),
              "bad/format:4: no 'ID:' line");
    EXPECT_EQ(error_of("name: x\nID: 1\nformat:\n\tfield:__data_loc char[] s;\toffset:8;\tsize:8;\tsigned:0;\n"),
              "bad/format:4: dynamic field 's' has size 8, expected 4");
    EXPECT_EQ(error_of("name: x\nID: 1\nformat:\n\tfield:int;\toffset:0;\tsize:4;\tsigned:1;\n"),
              "bad/format:4: no field name in 'int'");
    EXPECT_EQ(error_of("name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"
                       "\tfield:int a;\toffset:4;\tsize:4;\tsigned:1;\n"),
              "bad/format:5: duplicate field 'a'");
}

TEST(FormatParser, FieldsEndingPastAnyRecordAreRejectedWithoutWrapping)
{
    auto error_of = [](const std::string& field) {
        try {
            tpkit::parse_format("name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n" +
                                    field + "print fmt: \"\"\n",
                                "bad/format");
        } catch (const tpkit::FormatError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    // 0xFFFFFFF8 + 16 wraps to 8 in 32 bits.
    EXPECT_EQ(error_of("\tfield:u64 b[2];\toffset:4294967288;\tsize:16;\tsigned:0;\n"),
              "bad/format:5: field 'b' at offset 4294967288 size 16 ends past 65536 bytes, beyond "
              "any trace record");
    EXPECT_EQ(error_of("\tfield:char c[4294967292];\toffset:12;\tsize:4294967292;\tsigned:0;\n"),
              "bad/format:5: field 'c' at offset 12 size 4294967292 ends past 65536 bytes, beyond "
              "any trace record");
    EXPECT_EQ(error_of("\tfield:char d[65529];\toffset:8;\tsize:65529;\tsigned:0;\n"),
              "bad/format:5: field 'd' at offset 8 size 65529 ends past 65536 bytes, beyond any "
              "trace record");
    EXPECT_EQ(error_of("\tfield:char d[65524];\toffset:12;\tsize:65524;\tsigned:0;\n"), "no error");

    // Formats made by hand are not bounded by the parser: the fixed size does not wrap either.
    tpkit::EventFormat by_hand;
    by_hand.fields.push_back({"u64", "u64", "far", 0xFFFFFFF8u, 16});
    EXPECT_EQ(by_hand.fixed_size(), 0xFFFFFFFFu);
}
