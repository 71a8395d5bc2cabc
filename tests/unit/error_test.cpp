// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// one_line(): what every tool prints as its one line of error, whatever input it echoes;
// nearest_name(): its "did you mean …?".
#include <tpkit/support/error.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(NearestName, ASlipOfTheKeyboardFindsItsName)
{
    const std::vector<std::string> events{"sched:sched_switch", "sched:sched_wakeup",
                                          "syscalls:sys_enter_read", "syscalls:sys_exit_read"};
    EXPECT_EQ(tpkit::nearest_name("sched:sched_swich", events), "sched:sched_switch");  // a letter out
    EXPECT_EQ(tpkit::nearest_name("sched:sched_swtich", events), "sched:sched_switch"); // two swapped
    EXPECT_EQ(tpkit::nearest_name("syscall:sys_enter_read", events), "syscalls:sys_enter_read");
    // Equally near: the first by name.
    EXPECT_EQ(tpkit::nearest_name("sock:inet_sock_set_stat", {"sock:inet_sock_set_state", "sock:inet_sock_set_stats"}),
              "sock:inet_sock_set_state");
}

TEST(NearestName, NothingNearEnoughIsNoSuggestion)
{
    const std::vector<std::string> tools{"runqlat", "runqslower", "tcplife"};
    EXPECT_EQ(tpkit::nearest_name("runqlta", tools), "runqlat");
    EXPECT_EQ(tpkit::nearest_name("zzzzzzz", tools), "");
    EXPECT_EQ(tpkit::nearest_name("runqlat", tools), ""); // itself is no suggestion
    EXPECT_EQ(tpkit::nearest_name("rq", tools), "");      // two letters allow one edit
    EXPECT_EQ(tpkit::nearest_name("x", {}), "");
}
