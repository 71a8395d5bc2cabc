// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/process/signals.hpp"
#include "tpkit/support/error.hpp"

#include <gtest/gtest.h>

#include <csignal>

TEST(Signals, NamesOfStandardSignals)
{
    EXPECT_EQ(tpkit::signal_name(1), "SIGHUP");
    EXPECT_EQ(tpkit::signal_name(6), "SIGABRT");
    EXPECT_EQ(tpkit::signal_name(9), "SIGKILL");
    EXPECT_EQ(tpkit::signal_name(15), "SIGTERM");
    EXPECT_EQ(tpkit::signal_name(17), "SIGCHLD");
    EXPECT_EQ(tpkit::signal_name(31), "SIGSYS");
}

TEST(Signals, RealTimeSignalsAsKillListsThem)
{
    // glibc: SIGRTMIN is 34 (32 and 33 are its own), SIGRTMAX 64, split at the middle.
    ASSERT_EQ(SIGRTMIN, 34);
    ASSERT_EQ(SIGRTMAX, 64);
    EXPECT_EQ(tpkit::signal_name(32), "SIG32");
    EXPECT_EQ(tpkit::signal_name(33), "SIG33");
    EXPECT_EQ(tpkit::signal_name(34), "SIGRTMIN");
    EXPECT_EQ(tpkit::signal_name(35), "SIGRTMIN+1");
    EXPECT_EQ(tpkit::signal_name(49), "SIGRTMIN+15");
    EXPECT_EQ(tpkit::signal_name(50), "SIGRTMAX-14");
    EXPECT_EQ(tpkit::signal_name(63), "SIGRTMAX-1");
    EXPECT_EQ(tpkit::signal_name(64), "SIGRTMAX");
}

TEST(Signals, NoNameForWhatIsNoSignal)
{
    EXPECT_EQ(tpkit::signal_name(0), "");
    EXPECT_EQ(tpkit::signal_name(-9), "");
    EXPECT_EQ(tpkit::signal_name(65), "");
}

TEST(Signals, EveryNameParsesBackToItsNumber)
{
    for (int sig = 1; sig <= tpkit::max_signal; sig++) {
        std::string name(tpkit::signal_name(sig));
        EXPECT_EQ(tpkit::parse_signal(name), sig) << name;
        EXPECT_EQ(tpkit::parse_signal(name.substr(3)), sig) << name;
        EXPECT_EQ(tpkit::parse_signal(std::to_string(sig)), sig);
    }
}

TEST(Signals, ParsesAnyCaseAndAliases)
{
    EXPECT_EQ(tpkit::parse_signal("kill"), 9);
    EXPECT_EQ(tpkit::parse_signal("SigTerm"), 15);
    EXPECT_EQ(tpkit::parse_signal("rtmin+2"), 36);
    EXPECT_EQ(tpkit::parse_signal("IO"), SIGIO);
    EXPECT_EQ(tpkit::parse_signal("SIGIOT"), SIGABRT);
    EXPECT_EQ(tpkit::parse_signal("CLD"), SIGCHLD);
}

TEST(Signals, UnknownIsAUsageErrorNamingIt)
{
    for (const char* bad : {"", "SIG", "FOO", "SIGFOO", "0", "65", "-1", "9x", "KILL ", "RTMIN+40", "SIG5"}) {
        try {
            tpkit::parse_signal(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const tpkit::Error& e) {
            EXPECT_EQ(e.code(), tpkit::Exit::usage);
            EXPECT_EQ(std::string(e.what()),
                      std::string("unknown signal '") + bad +
                          "': give a name such as TERM or SIGTERM, or a number from 1 to 64");
        }
    }
}

TEST(Signals, SetsFromLists)
{
    EXPECT_EQ(tpkit::parse_signal_set("9"), 1u << 8);
    EXPECT_EQ(tpkit::parse_signal_set("1,KILL,sigterm"), (1u << 0) | (1u << 8) | (1u << 14));
    EXPECT_EQ(tpkit::parse_signal_set("64"), std::uint64_t(1) << 63);
    EXPECT_THROW(tpkit::parse_signal_set("9,"), tpkit::Error);
    EXPECT_THROW(tpkit::parse_signal_set(",9"), tpkit::Error);
}

TEST(Signals, ExitStatusesAsExitsnoopShowsThem)
{
    EXPECT_EQ(tpkit::exit_status_text(0), "0");
    EXPECT_EQ(tpkit::exit_status_text(7 << 8), "code 7");
    EXPECT_EQ(tpkit::exit_status_text(255 << 8), "code 255");
    EXPECT_EQ(tpkit::exit_status_text(9), "signal 9 (SIGKILL)");
    EXPECT_EQ(tpkit::exit_status_text(6 | 0x80), "signal 6 (SIGABRT), core dumped");
    EXPECT_EQ(tpkit::exit_status_text(34), "signal 34 (SIGRTMIN)");
}
