// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Syscall events on raw_syscalls, against the reference kernels' real format files: every event
// has a known number and the record layout the raw programs build, and the run's events are
// grouped into as few instances as their rodata allows.
#include "tpkit/engine/engine.hpp"
#include "tpkit/kernel/syscalls.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>

namespace fs = std::filesystem;

namespace {

fs::path events_root(const char* kernel) { return fs::path(TPKIT_FORMATS_DIR) / kernel; }

std::vector<tpkit::EventPlan> plans(const std::vector<std::string>& events,
                                    const std::string& filter = "")
{
    return tpkit::plan_events(events_root("linux-6.18"), events, filter);
}

std::size_t events_served(const std::vector<tpkit::InstancePlan>& instances)
{
    std::size_t n = 0;
    for (const auto& i : instances)
        n += i.events.size();
    return n;
}

} // namespace

TEST(SyscallEvents, EveryEventHasItsNumberAndTheRawRecordLayout)
{
    for (const char* kernel : {"linux-6.1", "linux-6.12", "linux-6.18"}) {
        auto names = tpkit::list_events(events_root(kernel), "syscalls:*");
        ASSERT_GT(names.size(), 600u) << kernel;
        for (const auto& name : names) {
            auto nr = tpkit::syscall_event_number(name.event);
            ASSERT_TRUE(nr) << kernel << " " << name.str();
            EXPECT_LT(*nr, std::uint32_t(TPKIT_SYSCALL_NR_MAX)) << name.str();
            auto format = tpkit::read_format(events_root(kernel) / name.system / name.event / "format");
            EXPECT_LE(format.fixed_size(), sizeof(tpkit_syscall_record)) << name.str();
            for (const auto& f : format.fields) {
                if (f.common)
                    continue;
                if (f.name == "__syscall_nr") {
                    EXPECT_EQ(f.offset, offsetof(tpkit_syscall_record, nr)) << name.str();
                    EXPECT_EQ(f.size, 4u) << name.str();
                    continue;
                }
                // Arguments, or ret: 64-bit words from args[0] on.
                EXPECT_EQ(f.size, 8u) << name.str() << " " << f.name;
                EXPECT_EQ((f.offset - offsetof(tpkit_syscall_record, args)) % 8, 0u) << name.str();
            }
        }
    }
    // Events named after the kernel's SYSCALL_DEFINE, not the table.
    EXPECT_EQ(tpkit::syscall_event_number("sys_enter_newfstat"), tpkit::syscall_number("fstat"));
    EXPECT_EQ(tpkit::syscall_event_number("sys_exit_umount"), tpkit::syscall_number("umount2"));
    EXPECT_EQ(tpkit::syscall_event_number("sys_enter_futex_wake"), 454u); // after 6.1's headers
    EXPECT_FALSE(tpkit::syscall_event_number("sched_switch"));
    EXPECT_FALSE(tpkit::syscall_event_number("sys_enter_nosuch"));
}

TEST(SyscallInstances, OneInstancePerSideWhenNothingElseDiffers)
{
    auto all = plans({"syscalls:sys_enter_*", "syscalls:sys_exit_*"});
    auto instances = tpkit::plan_instances(all, false, true);
    ASSERT_EQ(instances.size(), 2u);
    EXPECT_EQ(events_served(instances), all.size());
    EXPECT_EQ(instances[0].config.syscall_tracepoint, TPKIT_SYSCALL_ENTER);
    EXPECT_EQ(instances[1].config.syscall_tracepoint, TPKIT_SYSCALL_EXIT);
    EXPECT_FALSE(instances[0].config.syscall_args); // counting reads no argument
    for (const auto& instance : instances)
        for (auto event : instance.events)
            EXPECT_EQ(all[event].name.event.rfind(instance.config.syscall_tracepoint ==
                                                          TPKIT_SYSCALL_ENTER
                                                      ? "sys_enter_"
                                                      : "sys_exit_",
                                                  0),
                      0u);

    // --classic, or a machine without the raw path: one classic instance per event.
    EXPECT_EQ(tpkit::plan_instances(all, true, true).size(), all.size());
    EXPECT_EQ(tpkit::plan_instances(all, false, false).size(), all.size());
    for (const auto& instance : tpkit::plan_instances(all, true, true))
        EXPECT_FALSE(instance.raw_syscalls());
}

TEST(SyscallInstances, EventsApartOnlyWhereTheirRodataDiffers)
{
    // fd is the first argument of both: one instance, which reads the arguments.
    auto by_fd = plans({"syscalls:sys_enter_read", "syscalls:sys_enter_close"}, "fd == 3");
    auto instances = tpkit::plan_instances(by_fd, false, true);
    ASSERT_EQ(instances.size(), 1u);
    EXPECT_EQ(instances[0].config.syscall_args, 1u); // fd only
    EXPECT_EQ(instances[0].filter.event_id, 0u); // the filter does not read common_type
    auto by_count = plans({"syscalls:sys_enter_read"}, "count > 10 && fd == 3");
    EXPECT_EQ(tpkit::plan_instances(by_count, false, true).at(0).config.syscall_args, 5u);

    // common_type differs per event: kept apart.
    auto by_type = plans({"syscalls:sys_enter_read", "syscalls:sys_enter_close"}, "common_type != 0");
    EXPECT_EQ(tpkit::plan_instances(by_type, false, true).size(), 2u);

    // A classic event among them gets its own instance, on its tracepoint.
    auto mixed = plans({"sched:sched_process_fork", "syscalls:sys_enter_read", "syscalls:sys_enter_write"});
    instances = tpkit::plan_instances(mixed, false, true);
    ASSERT_EQ(instances.size(), 2u);
    EXPECT_FALSE(instances[0].raw_syscalls());
    EXPECT_EQ(instances[0].events, std::vector<std::uint32_t>{0});
    EXPECT_EQ(instances[1].events, (std::vector<std::uint32_t>{1, 2}));

    // tpsnoop copies records: the raw program reads the arguments; sizes differ, rodata not.
    auto snoop = plans({"syscalls:sys_enter_read", "syscalls:sys_enter_getpid"});
    tpkit::prepare_snoop(snoop, {});
    instances = tpkit::plan_instances(snoop, false, true);
    ASSERT_EQ(instances.size(), 1u);
    EXPECT_EQ(instances[0].config.syscall_args, 0x3fu); // every argument
    EXPECT_EQ(instances[0].config.fixed_size, 0u); // per event, in the syscall map
}

TEST(SyscallStrings, WhichArgumentsAreStringsTheCallReads)
{
    auto is_string = [](const char* event, const char* field) {
        auto format = tpkit::read_format(events_root("linux-6.18") / "syscalls" / event / "format");
        const tpkit::Field* f = format.field(field);
        EXPECT_NE(f, nullptr) << event << " " << field;
        return f && tpkit::is_syscall_user_string(format, *f);
    };
    EXPECT_TRUE(is_string("sys_enter_openat", "filename"));
    EXPECT_TRUE(is_string("sys_enter_execve", "filename"));
    EXPECT_FALSE(is_string("sys_enter_execve", "argv")); // const char *const *
    EXPECT_TRUE(is_string("sys_enter_unlinkat", "pathname"));
    EXPECT_TRUE(is_string("sys_enter_mkdir", "pathname"));
    EXPECT_TRUE(is_string("sys_enter_rename", "oldname"));
    EXPECT_TRUE(is_string("sys_enter_rename", "newname"));
    EXPECT_TRUE(is_string("sys_enter_umount", "name"));      // char *, a path
    EXPECT_FALSE(is_string("sys_enter_write", "buf"));       // bytes with a count
    EXPECT_FALSE(is_string("sys_enter_read", "buf"));        // filled by the call
    EXPECT_FALSE(is_string("sys_enter_readlink", "buf"));
    EXPECT_FALSE(is_string("sys_enter_sethostname", "name")); // with its len, no NUL
    EXPECT_FALSE(is_string("sys_enter_openat", "flags"));
    auto exit = tpkit::read_format(events_root("linux-6.18") / "syscalls" / "sys_exit_openat" / "format");
    EXPECT_FALSE(tpkit::is_syscall_user_string(exit, *exit.field("ret")));
}

TEST(SyscallStrings, TpsnoopReadsThemOnBothPaths)
{
    auto all = plans({"syscalls:sys_enter_openat", "syscalls:sys_enter_renameat2",
                      "syscalls:sys_enter_read"});
    tpkit::prepare_snoop(all, {});
    EXPECT_EQ(all[0].config.user_strings, 1u << 1);              // dfd, filename
    EXPECT_EQ(all[1].config.user_strings, (1u << 1) | (1u << 3)); // oldname, newname
    EXPECT_EQ(all[2].config.user_strings, 0u);
    // Classic instances keep the mask in rodata; a raw one has it per syscall, in its map, and
    // serves them all.
    auto classic = tpkit::plan_instances(all, true, true);
    ASSERT_EQ(classic.size(), 3u);
    EXPECT_EQ(classic[1].config.user_strings, all[1].config.user_strings);
    auto raw = tpkit::plan_instances(all, false, true);
    ASSERT_EQ(raw.size(), 1u);
    EXPECT_EQ(raw[0].config.user_strings, 0u);
    // -f: only the strings printed.
    auto some = plans({"syscalls:sys_enter_renameat2"});
    tpkit::prepare_snoop(some, {"newname", "flags"});
    EXPECT_EQ(some[0].config.user_strings, 1u << 3);
}

TEST(SyscallStrings, FiltersReadTheArgumentOfTheString)
{
    auto all = plans({"syscalls:sys_enter_openat", "syscalls:sys_enter_openat2"},
                     "filename ~ \"/tmp/*\"");
    auto raw = tpkit::plan_instances(all, false, true);
    ASSERT_EQ(raw.size(), 1u);
    EXPECT_EQ(raw[0].config.syscall_args, 1u << 1); // filename alone
    EXPECT_EQ(raw[0].filter.insns[0].source, TPKIT_FILTER_SRC_STR_USER);
}
