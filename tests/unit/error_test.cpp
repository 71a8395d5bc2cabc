// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// one_line(): what every tool prints as its one line of error, whatever input it echoes.
#include <tpkit/error.hpp>

#include <gtest/gtest.h>

#include <string>

using tpkit::one_line;

TEST(OneLine, EscapesControlBytesAndKeepsUtf8)
{
    EXPECT_EQ(one_line("unknown tracepoint 'a\nb'"), "unknown tracepoint 'a\\nb'");
    EXPECT_EQ(one_line(std::string("x\0y\x1b\x7fz", 6)), "x\\x00y\\x1b\\x7fz");
    EXPECT_EQ(one_line("comm 'caf\xc3\xa9'"), "comm 'caf\xc3\xa9'");
    EXPECT_EQ(one_line(""), "");
}

TEST(OneLine, CutsPastTheLimitWithTheCountLeftOut)
{
    const std::string exact(tpkit::max_message_bytes, 'a');
    EXPECT_EQ(one_line(exact), exact);
    EXPECT_EQ(one_line(exact + "bc"), exact + "... (2 more bytes)");
    // A cut never splits a UTF-8 sequence: é (2 bytes) straddling the limit goes whole.
    const std::string before(tpkit::max_message_bytes - 1, 'a');
    EXPECT_EQ(one_line(before + "\xc3\xa9" + "z"), before + "... (3 more bytes)");
}
