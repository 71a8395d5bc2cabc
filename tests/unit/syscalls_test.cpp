// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/kernel/syscalls.hpp"

#include "tpkit/support/error.hpp"

#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>

namespace {

tpkit::Exit exit_of(auto&& call)
{
    try {
        call();
    } catch (const tpkit::Error& e) {
        return e.code();
    }
    return tpkit::Exit::ok;
}

} // namespace

TEST(Syscalls, KnownNumbersAndNamesOnX8664)
{
#if defined(__x86_64__)
    const std::pair<std::uint32_t, std::string_view> known[] = {
        {0, "read"},    {1, "write"},        {3, "close"},  {39, "getpid"},
        {56, "clone"},  {59, "execve"},      {60, "exit"},  {110, "getppid"},
        {231, "exit_group"}, {257, "openat"}, {435, "clone3"}};
    for (const auto& [number, name] : known) {
        EXPECT_EQ(tpkit::syscall_name(number), name) << number;
        EXPECT_EQ(tpkit::syscall_number(name), number) << name;
    }
#else
    GTEST_SKIP() << "the numbers checked are x86-64's";
#endif
}

TEST(Syscalls, AgreeWithTheCompilersSysSyscallH)
{
    // The generated table and glibc's <sys/syscall.h> read the same kernel header.
    EXPECT_EQ(tpkit::syscall_name(SYS_getppid), "getppid");
    EXPECT_EQ(tpkit::syscall_name(SYS_close), "close");
    EXPECT_EQ(tpkit::syscall_name(SYS_read), "read");
    EXPECT_EQ(tpkit::syscall_name(SYS_execve), "execve");
}

TEST(Syscalls, TableIsByNumberWithoutDuplicates)
{
    auto all = tpkit::syscalls();
    ASSERT_GT(all.size(), 300u);
    EXPECT_TRUE(std::is_sorted(all.begin(), all.end(),
                               [](const auto& a, const auto& b) { return a.number < b.number; }));
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end(),
                                 [](const auto& a, const auto& b) { return a.number == b.number; }),
              all.end());
    for (const auto& s : all)
        EXPECT_EQ(tpkit::syscall_number(s.name), s.number) << s.name;
}

TEST(Syscalls, UnknownNumbersAndNames)
{
    EXPECT_EQ(tpkit::syscall_name(4000), std::nullopt);
    EXPECT_EQ(tpkit::syscall_text(4000), "[unknown: 4000]");
    EXPECT_EQ(tpkit::syscall_text(SYS_getppid), "getppid");
    EXPECT_EQ(tpkit::syscall_number("no_such_syscall"), std::nullopt);
    EXPECT_EQ(tpkit::syscall_number("READ"), std::nullopt);
    EXPECT_EQ(tpkit::syscall_number(""), std::nullopt);
}

TEST(Syscalls, ParseNameOrNumber)
{
    EXPECT_EQ(tpkit::parse_syscall("getppid"), static_cast<std::uint32_t>(SYS_getppid));
    EXPECT_EQ(tpkit::parse_syscall("110"), 110u);
    EXPECT_EQ(tpkit::parse_syscall("1023"), 1023u); // a number the headers may not name yet
    // Past the BPF tables (syscount --syscall 1024 counted nothing).
    for (const char* bad : {"no_such_syscall", "1024", "4096", "-1", "1x", "", " 1"})
        EXPECT_EQ(exit_of([&] { tpkit::parse_syscall(bad); }), tpkit::Exit::usage) << bad;
}

TEST(Errnos, NamesAndNumbers)
{
    EXPECT_EQ(tpkit::errno_name(ENOENT), "ENOENT");
    EXPECT_EQ(tpkit::errno_name(EBADF), "EBADF");
    EXPECT_EQ(tpkit::errno_name(4000), std::nullopt);
    EXPECT_EQ(tpkit::errno_number("ENOENT"), ENOENT);
    EXPECT_EQ(tpkit::errno_number("EBADF"), EBADF);
    EXPECT_EQ(tpkit::errno_number("EAGAIN"), EAGAIN);
    EXPECT_EQ(tpkit::errno_number("EWOULDBLOCK"), EAGAIN);
    EXPECT_EQ(tpkit::errno_number("ENOTSUP"), EOPNOTSUPP);
    EXPECT_EQ(tpkit::errno_number("EFOO"), std::nullopt);
    EXPECT_EQ(tpkit::errno_number("enoent"), std::nullopt);
}

TEST(Errnos, ParseNameOrNumber)
{
    EXPECT_EQ(tpkit::parse_errno("EBADF"), EBADF);
    EXPECT_EQ(tpkit::parse_errno("9"), 9);
    EXPECT_EQ(tpkit::parse_errno("512"), 512); // ERESTARTSYS: kernel-internal, seen at sys_exit
    for (const char* bad : {"EFOO", "0", "4096", "-9", "9 ", ""})
        EXPECT_EQ(exit_of([&] { tpkit::parse_errno(bad); }), tpkit::Exit::usage) << bad;
}
