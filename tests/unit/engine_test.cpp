// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Engine configuration from the reference kernels' real format files: events by name and glob,
// how each field is read, --by keys, histogram values, record layouts, positionals.
#include "reference_data.hpp"
#include "tpkit/engine/engine.hpp"
#include "tpkit/hist.h"
#include "tpkit/support/error.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;
using tpkit::Exit;

namespace {

using tpkit::test::events_root;
using tpkit::test::reference_format;

template <class F>
Exit exit_of(F&& f)
{
    try {
        f();
    } catch (const tpkit::Error& e) {
        return e.code();
    }
    return Exit::ok;
}

std::size_t count_format_files(const fs::path& root)
{
    std::size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(root))
        n += e.path().filename() == "format";
    return n;
}

} // namespace

TEST(EngineEvents, ListsEveryEventAndFiltersByGlob)
{
    for (const char* kernel : {"linux-6.1", "linux-6.12", "linux-6.18"}) {
        auto all = tpkit::list_events(events_root(kernel), "");
        EXPECT_EQ(all.size(), count_format_files(events_root(kernel))) << kernel;
        EXPECT_TRUE(std::is_sorted(all.begin(), all.end(), [](const auto& a, const auto& b) {
            return a.str() < b.str();
        }));
    }
    auto forks = tpkit::list_events(events_root("linux-6.18"), "sched:sched_process_f*");
    ASSERT_EQ(forks.size(), 2u);
    EXPECT_EQ(forks[0].str(), "sched:sched_process_fork");
    EXPECT_EQ(forks[1].str(), "sched:sched_process_free");

    // Without ':' a glob names a system or an event.
    auto sys = tpkit::list_events(events_root("linux-6.18"), "sched");
    auto by_event = tpkit::list_events(events_root("linux-6.18"), "sys_enter_rea?");
    EXPECT_GT(sys.size(), 20u);
    for (const auto& n : sys)
        EXPECT_EQ(n.system, "sched");
    std::set<std::string> names;
    for (const auto& n : by_event)
        names.insert(n.str());
    EXPECT_EQ(names, (std::set<std::string>{"syscalls:sys_enter_read"}));
    EXPECT_TRUE(tpkit::list_events(events_root("linux-6.18"), "nosuch:*").empty());
}

TEST(EngineEvents, PlansResolveNamesGlobsAndFilters)
{
    auto root = events_root("linux-6.18");
    auto plans = tpkit::plan_events(root, {"sched:sched_process_fork", "syscalls:sys_enter_rea?",
                                           "sched:sched_process_fork"},
                                    "");
    ASSERT_EQ(plans.size(), 2u); // the repeated event once
    EXPECT_EQ(plans[0].name.str(), "sched:sched_process_fork");
    EXPECT_EQ(plans[1].name.str(), "syscalls:sys_enter_read");
    EXPECT_EQ(plans[1].config.event, 1u);
    EXPECT_EQ(plans[1].filter.event_id, plans[1].format.id);
    EXPECT_EQ(plans[0].filter.len, 0u);

    EXPECT_EQ(exit_of([&] { tpkit::plan_events(root, {"sched:nosuch"}, ""); }), Exit::unknown_target);
    EXPECT_EQ(exit_of([&] { tpkit::plan_events(root, {"nosuch:*"}, ""); }), Exit::unknown_target);
    EXPECT_EQ(exit_of([&] { tpkit::plan_events(root, {"sched"}, ""); }), Exit::usage);
    EXPECT_EQ(exit_of([&] { tpkit::plan_events(root, {"syscalls:sys_enter_read"}, "count >"); }),
              Exit::usage);
    EXPECT_EQ(exit_of([&] { tpkit::plan_events(root, {"syscalls:sys_enter_*"}, "", 10); }),
              Exit::usage);

    // A filter is compiled against each event's own layout: child_pid moved between kernels
    // (after 6.12, which still has 6.1's layout).
    auto old = tpkit::plan_events(events_root("linux-6.1"), {"sched:sched_process_fork"}, "child_pid == 7");
    auto v612 = tpkit::plan_events(events_root("linux-6.12"), {"sched:sched_process_fork"}, "child_pid == 7");
    auto now = tpkit::plan_events(root, {"sched:sched_process_fork"}, "child_pid == 7");
    EXPECT_EQ(old[0].filter.insns[0].offset, 44u);
    EXPECT_EQ(v612[0].filter.insns[0].offset, 44u);
    EXPECT_EQ(now[0].filter.insns[0].offset, 20u);

    // The common_* header is not in the record when BPF runs: common_pid is the current thread,
    // common_type the event's ID, and the other two are refused.
    auto by_pid = tpkit::plan_events(root, {"sched:sched_process_fork"},
                                     "child_pid == 7 || common_pid == 1 || common_type == 2");
    EXPECT_EQ(by_pid[0].filter.insns[1].source, TPKIT_FILTER_SRC_TID);
    EXPECT_EQ(by_pid[0].filter.insns[2].source, TPKIT_FILTER_SRC_EVENT_ID);
    EXPECT_EQ(by_pid[0].filter.event_id, by_pid[0].format.id);
    EXPECT_EQ(exit_of([&] { tpkit::plan_events(root, {"sched:sched_process_fork"}, "common_flags == 0"); }),
              Exit::usage);
}

// Options of any length are split without recursion: these overflowed the stack of the regex
// that split them (about 78,000 frames).
TEST(EngineEvents, LongFilterOptionsAreSplitWhateverTheirLength)
{
    const std::string long_name(30000, 'A');
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{long_name}).of({"x", "y"}), long_name);
    const std::string negations = std::string(60000, '!') + "(fd==1)";
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{negations}).of({"x", "y"}), negations);
    const std::string spaced = "sched:sched_switch=prev_pid == 1" + std::string(40000, ' ');
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{spaced}).of({"sched", "sched_switch"}),
              spaced.substr(std::string("sched:sched_switch=").size()));
    // The scope's shape: one ':' between two names of glob characters, then '=' and not '=='.
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{"a:b:c=x"}).of({"q", "r"}), "a:b:c=x");
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{":b=x"}).of({"q", "r"}), ":b=x");
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{"a:b==1"}).of({"q", "r"}), "a:b==1");
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{"s*:[ab]?-!=x"}).of({"sys", "a1-!"}), "x");
}

TEST(EngineEvents, FiltersScopedToEventsApplyToThoseAlone)
{
    auto root = events_root("linux-6.18");
    // Every event: "count > 1"; sys_enter_read also "fd == 3"; the sched glob, its own.
    tpkit::EventFilters filters(std::vector<std::string>{
        "count > 1", "syscalls:sys_enter_read=fd == 3", "sched:sched_process_f*=child_pid == 7"});
    EXPECT_EQ(filters.of({"syscalls", "sys_enter_write"}), "count > 1");
    EXPECT_EQ(filters.of({"syscalls", "sys_enter_read"}), "(count > 1) && (fd == 3)");
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{"sched:sched_switch=prev_pid==1"})
                  .of({"sched", "sched_switch"}),
              "prev_pid==1");
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{"sched:sched_switch=prev_pid==1"})
                  .of({"sched", "sched_wakeup"}),
              "");
    // An expression that only looks like a scope is one expression: '==' after the name.
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{"comm == \"a:b=c\""}).of({"x", "y"}),
              "comm == \"a:b=c\"");

    auto plans = tpkit::plan_events(
        root, {"syscalls:sys_enter_read", "syscalls:sys_enter_write"},
        tpkit::EventFilters(std::vector<std::string>{"syscalls:sys_enter_read=fd == 3"}));
    ASSERT_EQ(plans.size(), 2u);
    EXPECT_GT(plans[0].filter.len, 0u);
    EXPECT_EQ(plans[1].filter.len, 0u);

    // A scope that names none of the events, or no expression after '=', is a usage error; so is
    // an expression that does not fit the event it names.
    for (const char* bad : {"sched:sched_switch=prev_pid == 1", "syscalls:sys_enter_read=",
                            "syscalls:sys_enter_write=fd == 3 &&"})
        EXPECT_EQ(exit_of([&] {
                      tpkit::plan_events(root, {"syscalls:sys_enter_read", "syscalls:sys_enter_write"},
                                         tpkit::EventFilters(std::vector<std::string>{bad}));
                  }),
                  Exit::usage)
            << bad;
    // --by errno adds `ret < 0` to every event's own filter.
    EXPECT_EQ(tpkit::EventFilters(std::vector<std::string>{"syscalls:sys_exit_read=ret == -2"})
                  .and_every("ret < 0")
                  .of({"syscalls", "sys_exit_read"}),
              "(ret == -2) && (ret < 0)");
}

TEST(EngineEvents, SnoopFieldsAndRecordLayout)
{
    auto root = events_root("linux-6.18");
    auto plans = tpkit::plan_events(root, {"sched:sched_process_fork", "syscalls:sys_enter_read"}, "");
    EXPECT_EQ(plans[1].config.event_id, 0u); // only tpsnoop copies records
    tpkit::prepare_snoop(plans, {"common_pid", "common_type", "count"});
    EXPECT_EQ(plans[0].config.event_id, plans[0].format.id);
    EXPECT_EQ(plans[1].config.event_id, plans[1].format.id);
    EXPECT_EQ(plans[0].config.dynamic_count, 2u);
    EXPECT_EQ(exit_of([&] { tpkit::prepare_snoop(plans, {"count", "nosuch"}); }), Exit::unknown_target);
    for (const char* hidden : {"common_flags", "common_preempt_count"}) {
        try {
            tpkit::prepare_snoop(plans, {hidden});
            ADD_FAILURE() << hidden << " accepted";
        } catch (const tpkit::Error& e) {
            EXPECT_EQ(e.code(), Exit::usage);
            EXPECT_EQ(std::string(e.what()), "-f '" + std::string(hidden) +
                                                 "' is not visible to BPF programs at a tracepoint "
                                                 "(the kernel fills it in after they run, from state "
                                                 "BPF cannot read)");
        }
    }
}

TEST(EngineFields, DirectLoadsWhereTheVerifierAllowsThem)
{
    auto read = reference_format("linux-6.18", "syscalls", "sys_enter_read");
    auto count = tpkit::field_spec(*read.field("count"));
    EXPECT_EQ(count.access, TPKIT_FIELD_LOAD);
    EXPECT_EQ(count.offset, 32u);
    EXPECT_EQ(count.size, 8u);
    EXPECT_EQ(count.load_slot, (32u - TPKIT_FIELD_LOAD_MIN) / 8);
    EXPECT_EQ(count.is_signed, 0);
    auto nr = tpkit::field_spec(*read.field("__syscall_nr"));
    EXPECT_EQ(nr.access, TPKIT_FIELD_LOAD);
    EXPECT_EQ(nr.load_slot, 0u);
    EXPECT_EQ(nr.is_signed, 1);
    // A pointer is a number, never sign-extended.
    auto buf = tpkit::field_spec(*read.field("buf"));
    EXPECT_EQ(buf.access, TPKIT_FIELD_LOAD);
    EXPECT_EQ(buf.is_signed, 0);

    // Strings: char[16] on 6.1 and 6.12, __data_loc on 6.18.
    for (const char* kernel : {"linux-6.1", "linux-6.12"}) {
        auto old = tpkit::field_spec(*reference_format(kernel, "sched", "sched_process_fork").field("parent_comm"));
        EXPECT_EQ(old.access, TPKIT_FIELD_STR_FIXED) << kernel;
        EXPECT_EQ(old.offset, 8u) << kernel;
        EXPECT_EQ(old.size, 16u) << kernel;
    }
    auto now = tpkit::field_spec(*reference_format("linux-6.18", "sched", "sched_process_fork").field("parent_comm"));
    EXPECT_EQ(now.access, TPKIT_FIELD_STR_DATA_LOC);

    // Every integer field of each reference kernel: loaded directly exactly when aligned and
    // inside the window, its slot pointing back at its offset.
    for (const char* kernel : {"linux-6.1", "linux-6.12", "linux-6.18"}) {
        std::size_t loads = 0, probes = 0;
        for (const auto& name : tpkit::list_events(events_root(kernel), "")) {
            auto f = reference_format(kernel, name.system.c_str(), name.event.c_str());
            for (const auto& field : f.fields) {
                auto spec = tpkit::field_spec(field);
                if (!tpkit::is_numeric(field))
                    continue;
                bool in_window = field.offset >= TPKIT_FIELD_LOAD_MIN &&
                                 field.offset + field.size <= TPKIT_FIELD_LOAD_END &&
                                 field.offset % field.size == 0;
                ASSERT_EQ(spec.access, in_window ? TPKIT_FIELD_LOAD : TPKIT_FIELD_PROBE)
                    << name.str() << " " << field.name;
                if (in_window) {
                    ASSERT_EQ(TPKIT_FIELD_LOAD_MIN + spec.load_slot * field.size, field.offset);
                }
                (in_window ? loads : probes) += !field.common;
            }
        }
        // Only the common_* header is outside the window on the reference kernels.
        EXPECT_GT(loads, 4000u) << kernel;
        EXPECT_EQ(probes, 0u) << kernel;
    }
}

TEST(EngineFields, ProbeReadsOutsideTheWindow)
{
    auto f = tpkit::parse_format(R"(name: wide
ID: 9
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;
	field:char blob[300];	offset:8;	size:300;	signed:0;
	field:u32 odd;	offset:310;	size:4;	signed:0;
	field:s64 far;	offset:320;	size:8;	signed:1;
	field:u8 mac[6];	offset:328;	size:6;	signed:0;

print fmt: "x"
)", "wide");
    EXPECT_EQ(tpkit::field_spec(*f.field("odd")).access, TPKIT_FIELD_PROBE);
    EXPECT_EQ(tpkit::field_spec(*f.field("far")).access, TPKIT_FIELD_PROBE);
    EXPECT_EQ(tpkit::field_spec(*f.field("far")).is_signed, 1);
    EXPECT_EQ(tpkit::field_spec(*f.field("mac")).access, TPKIT_FIELD_NONE);
    EXPECT_EQ(tpkit::field_spec(*f.field("blob")).access, TPKIT_FIELD_STR_FIXED);
}

TEST(EngineFields, HistogramValueMustBeAnInteger)
{
    auto fork = reference_format("linux-6.18", "sched", "sched_process_fork");
    tpkit_engine_config config{};
    tpkit::configure_value(config, fork, "child_pid");
    EXPECT_EQ(config.value.offset, 20u);
    EXPECT_EQ(config.value.is_signed, 1);
    EXPECT_EQ(exit_of([&] { tpkit::configure_value(config, fork, "child_comm"); }), Exit::usage);
    EXPECT_EQ(exit_of([&] { tpkit::configure_value(config, fork, "nosuch"); }), Exit::unknown_target);
    EXPECT_EQ(exit_of([&] { tpkit::configure_value(config, fork, "common_pid"); }), Exit::usage);
    EXPECT_EQ(exit_of([&] { tpkit::configure_value(config, fork, "common_flags"); }), Exit::usage);
    try {
        tpkit::configure_value(config, fork, "nosuch");
    } catch (const tpkit::Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "sched:sched_process_fork has no field 'nosuch' (fields: parent_comm, "
                  "parent_pid, child_comm, child_pid)");
    }
    auto probe = reference_format("linux-6.18", "tcp", "tcp_probe");
    EXPECT_EQ(exit_of([&] { tpkit::configure_value(config, probe, "saddr"); }), Exit::usage);
}

TEST(EngineKeys, ByGenericKeysAndFields)
{
    using tpkit::parse_key;
    using Parts = std::vector<tpkit_key_source>;
    EXPECT_TRUE(parse_key("", {}).empty());
    EXPECT_EQ(parse_key("comm", {TPKIT_KEY_COMM}).parts, Parts{TPKIT_KEY_COMM});
    EXPECT_EQ(parse_key("cpu", {TPKIT_KEY_CPU}).parts, Parts{TPKIT_KEY_CPU});
    EXPECT_EQ(exit_of([] { parse_key("tid", {TPKIT_KEY_COMM}); }), Exit::usage);
    EXPECT_EQ(exit_of([] { parse_key("a b", {}); }), Exit::usage);
    auto key = parse_key("child_comm", {});
    EXPECT_EQ(key.parts, Parts{TPKIT_KEY_FIELD});
    EXPECT_EQ(key.name(), "child_comm");

    auto fork = reference_format("linux-6.18", "sched", "sched_process_fork");
    tpkit_engine_config config{};
    tpkit::configure_key(config, key, fork);
    EXPECT_EQ(config.key_parts, TPKIT_KEY_BIT(TPKIT_KEY_FIELD));
    EXPECT_EQ(config.key_field.access, TPKIT_FIELD_STR_DATA_LOC);
    EXPECT_EQ(config.key_field.offset, 16u);

    tpkit::configure_key(config, parse_key("common_pid", {}), fork);
    EXPECT_EQ(config.key_parts, TPKIT_KEY_BIT(TPKIT_KEY_TID));
    EXPECT_EQ(exit_of([&] { tpkit::configure_key(config, parse_key("common_flags", {}), fork); }),
              Exit::usage);
    EXPECT_EQ(exit_of([&] { tpkit::configure_key(config, parse_key("common_type", {}), fork); }),
              Exit::usage);
    EXPECT_EQ(exit_of([&] { tpkit::configure_key(config, parse_key("nosuch", {}), fork); }),
              Exit::unknown_target);

    // Keys read back: strings, signed and unsigned numbers, pointers in hex.
    tpkit_engine_key k{};
    std::snprintf(k.str, sizeof(k.str), "bash");
    EXPECT_EQ(tpkit::key_text(k, key, TPKIT_KEY_FIELD, fork), "bash");
    k.number = static_cast<std::uint64_t>(-3);
    EXPECT_EQ(tpkit::key_text(k, parse_key("child_pid", {}), TPKIT_KEY_FIELD, fork), "-3");
    auto read = reference_format("linux-6.18", "syscalls", "sys_enter_read");
    k.number = 0xffff8880deadbeefULL;
    EXPECT_EQ(tpkit::key_text(k, parse_key("buf", {}), TPKIT_KEY_FIELD, read), "0xffff8880deadbeef");
    k.number = 4096;
    EXPECT_EQ(tpkit::key_text(k, parse_key("count", {}), TPKIT_KEY_FIELD, read), "4096");
    k.pid = 4096;
    EXPECT_EQ(tpkit::key_text(k, parse_key("pid", {TPKIT_KEY_PID}), TPKIT_KEY_PID, read), "4096");
    EXPECT_TRUE(tpkit::key_is_number(parse_key("pid", {TPKIT_KEY_PID}), TPKIT_KEY_PID, read));
    EXPECT_TRUE(tpkit::key_is_number(parse_key("count", {}), TPKIT_KEY_FIELD, read));
    EXPECT_FALSE(tpkit::key_is_number(parse_key("buf", {}), TPKIT_KEY_FIELD, read));
    EXPECT_FALSE(tpkit::key_is_number(parse_key("comm", {TPKIT_KEY_COMM}), TPKIT_KEY_COMM, read));
    EXPECT_FALSE(tpkit::key_is_number(key, TPKIT_KEY_FIELD, fork));
}

TEST(EngineKeys, CompositeKeysInTheirOrder)
{
    using tpkit::parse_key;
    using Parts = std::vector<tpkit_key_source>;
    const std::initializer_list<tpkit_key_source> all = {TPKIT_KEY_COMM, TPKIT_KEY_PID,
                                                         TPKIT_KEY_TID, TPKIT_KEY_CPU,
                                                         TPKIT_KEY_KSTACK, TPKIT_KEY_USTACK};
    auto pid_comm = parse_key("pid,comm", all);
    EXPECT_EQ(pid_comm.parts, (Parts{TPKIT_KEY_PID, TPKIT_KEY_COMM}));
    EXPECT_EQ(pid_comm.name(), "pid,comm");
    EXPECT_EQ(pid_comm.bits(), TPKIT_KEY_BIT(TPKIT_KEY_PID) | TPKIT_KEY_BIT(TPKIT_KEY_COMM));
    auto comm_field = parse_key("comm,child_pid", all);
    EXPECT_EQ(comm_field.parts, (Parts{TPKIT_KEY_COMM, TPKIT_KEY_FIELD}));
    EXPECT_EQ(comm_field.field, "child_pid");
    EXPECT_EQ(parse_key("kstack,ustack", all).parts,
              (Parts{TPKIT_KEY_COMM, TPKIT_KEY_KSTACK, TPKIT_KEY_USTACK})); // comm: the root frame
    EXPECT_EQ(parse_key("ustack,comm", all).parts, (Parts{TPKIT_KEY_USTACK, TPKIT_KEY_COMM}));
    EXPECT_EQ(parse_key("kstack", all).parts, Parts{TPKIT_KEY_KSTACK});
    EXPECT_TRUE(parse_key("kstack", all).has_stack());
    EXPECT_FALSE(pid_comm.has_stack());
    EXPECT_EQ(exit_of([&] { parse_key("pid,pid", all); }), Exit::usage);
    EXPECT_EQ(exit_of([&] { parse_key("fd,count", all); }), Exit::usage); // one field
    EXPECT_EQ(exit_of([&] { parse_key("pid,", all); }), Exit::usage);
    EXPECT_EQ(exit_of([&] { parse_key("kstack", {TPKIT_KEY_PID}); }), Exit::usage);

    // Each part from its own member of the key.
    auto fork = reference_format("linux-6.18", "sched", "sched_process_fork");
    tpkit_engine_config config{};
    tpkit::configure_key(config, comm_field, fork);
    EXPECT_EQ(config.key_parts, TPKIT_KEY_BIT(TPKIT_KEY_COMM) | TPKIT_KEY_BIT(TPKIT_KEY_FIELD));
    tpkit_engine_key k{};
    k.pid = 12;
    k.number = 34;
    std::snprintf(k.comm, sizeof(k.comm), "bash");
    EXPECT_EQ(tpkit::key_text(k, pid_comm, TPKIT_KEY_PID, fork), "12");
    EXPECT_EQ(tpkit::key_text(k, pid_comm, TPKIT_KEY_COMM, fork), "bash");
    EXPECT_EQ(tpkit::key_text(k, comm_field, TPKIT_KEY_FIELD, fork), "34");
    // common_pid is the thread's ID, read from the key's tid.
    auto by_common_pid = parse_key("comm,common_pid", all);
    tpkit::configure_key(config, by_common_pid, fork);
    EXPECT_EQ(config.key_parts, TPKIT_KEY_BIT(TPKIT_KEY_COMM) | TPKIT_KEY_BIT(TPKIT_KEY_TID));
    k.tid = 56;
    EXPECT_EQ(tpkit::key_text(k, by_common_pid, TPKIT_KEY_FIELD, fork), "56");
}

TEST(EngineKeys, SyscallsAndErrorsByName)
{
    using tpkit::parse_key;
    auto raw_enter = reference_format("linux-6.18", "raw_syscalls", "sys_enter");
    auto raw_exit = reference_format("linux-6.18", "raw_syscalls", "sys_exit");
    auto openat = reference_format("linux-6.18", "syscalls", "sys_exit_openat");
    auto fork = reference_format("linux-6.18", "sched", "sched_process_fork");
    auto by_syscall = parse_key("syscall", {});
    auto by_errno = parse_key("errno", {});
    EXPECT_EQ(by_syscall.name(), "syscall");
    EXPECT_EQ(by_errno.name(), "errno");
    // Each event's own field: raw_syscalls' id, syscalls:*'s __syscall_nr, the exits' ret.
    EXPECT_EQ(by_syscall.field_in(raw_enter), raw_enter.field("id"));
    EXPECT_EQ(by_syscall.field_in(openat), openat.field("__syscall_nr"));
    EXPECT_EQ(by_errno.field_in(raw_exit), raw_exit.field("ret"));
    EXPECT_EQ(by_errno.field_in(raw_enter), nullptr);
    tpkit_engine_config config{};
    tpkit::configure_key(config, by_syscall, raw_enter);
    EXPECT_EQ(config.key_field.offset, raw_enter.field("id")->offset);
    tpkit::configure_key(config, by_errno, openat);
    EXPECT_EQ(config.key_field.offset, openat.field("ret")->offset);
    EXPECT_EQ(exit_of([&] { tpkit::configure_key(config, by_syscall, fork); }), Exit::usage);
    EXPECT_EQ(exit_of([&] { tpkit::configure_key(config, by_errno, raw_enter); }), Exit::usage);

    tpkit_engine_key k{};
    k.number = 0;
    EXPECT_EQ(tpkit::key_text(k, by_syscall, TPKIT_KEY_FIELD, raw_enter), "read");
    k.number = 257;
    EXPECT_EQ(tpkit::key_text(k, by_syscall, TPKIT_KEY_FIELD, openat), "openat");
    k.number = 4000;
    EXPECT_EQ(tpkit::key_text(k, by_syscall, TPKIT_KEY_FIELD, openat), "[unknown: 4000]");
    k.number = static_cast<std::uint64_t>(-2);
    EXPECT_EQ(tpkit::key_text(k, by_errno, TPKIT_KEY_FIELD, openat), "ENOENT");
    EXPECT_EQ(tpkit::key_text(k, parse_key("ret", {}), TPKIT_KEY_FIELD, openat), "-ENOENT");
    EXPECT_EQ(tpkit::key_text(k, parse_key("ret", {}), TPKIT_KEY_FIELD, raw_exit), "-ENOENT");
    k.number = 3;
    EXPECT_EQ(tpkit::key_text(k, parse_key("ret", {}), TPKIT_KEY_FIELD, openat), "3");
    EXPECT_FALSE(tpkit::key_is_number(by_syscall, TPKIT_KEY_FIELD, raw_enter));
    EXPECT_FALSE(tpkit::key_is_number(by_errno, TPKIT_KEY_FIELD, openat));
    EXPECT_FALSE(tpkit::key_is_number(parse_key("ret", {}), TPKIT_KEY_FIELD, openat));
    EXPECT_TRUE(tpkit::key_is_number(parse_key("id", {}), TPKIT_KEY_FIELD, raw_enter));
}

TEST(EngineRecords, DynamicFieldsAreFoundForTheCopy)
{
    tpkit_engine_config config{};
    auto now = reference_format("linux-6.18", "sched", "sched_process_fork");
    tpkit::configure_record(config, now);
    EXPECT_EQ(config.event_id, now.id);
    EXPECT_EQ(config.fixed_size, 24u);
    ASSERT_EQ(config.dynamic_count, 2u);
    EXPECT_EQ(config.dynamic_offsets[0], 8u);
    EXPECT_EQ(config.dynamic_offsets[1], 16u);

    for (const char* kernel : {"linux-6.1", "linux-6.12"}) {
        tpkit::configure_record(config, reference_format(kernel, "sched", "sched_process_fork"));
        EXPECT_EQ(config.fixed_size, 48u) << kernel;
        EXPECT_EQ(config.dynamic_count, 0u) << kernel;
    }

    // Every event of each reference kernel fits the copy.
    for (const char* kernel : {"linux-6.1", "linux-6.12", "linux-6.18"})
        for (const auto& name : tpkit::list_events(events_root(kernel), "")) {
            auto f = reference_format(kernel, name.system.c_str(), name.event.c_str());
            ASSERT_EQ(exit_of([&] { tpkit::configure_record(config, f); }), Exit::ok) << name.str();
            EXPECT_LE(config.fixed_size, std::uint32_t(TPKIT_SNOOP_RECORD_MAX));
        }
}

TEST(EngineCli, TrailingNumbersAreIntervalAndCount)
{
    tpkit::CommonOptions options;
    auto events = tpkit::split_interval_count({"sched:a", "net:b", "0.5", "3"}, options);
    EXPECT_EQ(events, (std::vector<std::string>{"sched:a", "net:b"}));
    EXPECT_DOUBLE_EQ(options.interval, 0.5);
    EXPECT_EQ(options.count, 3u);

    tpkit::CommonOptions one;
    EXPECT_EQ(tpkit::split_interval_count({"sched:a", "2"}, one).size(), 1u);
    EXPECT_DOUBLE_EQ(one.interval, 2);
    EXPECT_EQ(one.count, 0u);

    tpkit::CommonOptions bad;
    EXPECT_EQ(exit_of([&] { tpkit::split_interval_count({"1", "2"}, bad); }), Exit::usage);
    EXPECT_EQ(exit_of([&] { tpkit::split_interval_count({"x:y", "0"}, bad); }), Exit::usage);
    EXPECT_EQ(exit_of([&] { tpkit::split_interval_count({"x:y", "1", "2.5"}, bad); }), Exit::usage);
}

TEST(EngineHistogram, SlotsOfTheChosenLayout)
{
    tpkit_engine_config config{};
    config.hist_layout = TPKIT_HIST_LINEAR;
    config.linear_min = 0;
    config.linear_max = 1000;
    config.linear_step = 100;
    std::vector<std::uint64_t> slots(TPKIT_LINEAR_SLOTS);
    slots[tpkit_linear_slot(150, 0, 1000, 100)] = 5;
    auto hist = tpkit::histogram_from_slots(config, slots);
    EXPECT_EQ(hist.kind(), tpkit::HistogramKind::linear);
    ASSERT_EQ(hist.nonempty_span().size(), 1u);
    EXPECT_EQ(hist.nonempty_span()[0], (tpkit::Bucket{100, 199, 5}));

    config.hist_layout = TPKIT_HIST_LOG2;
    std::vector<std::uint64_t> log2(TPKIT_LOG2_SLOTS);
    log2[tpkit_log2_u64(100)] = 2;
    EXPECT_EQ(tpkit::histogram_from_slots(config, log2).nonempty_span()[0],
              (tpkit::Bucket{64, 127, 2}));
}

TEST(EngineKeys, SyscallStringsByTheString)
{
    auto openat = reference_format("linux-6.18", "syscalls", "sys_enter_openat");
    auto by = tpkit::parse_key("filename", {});
    tpkit_engine_config config{};
    tpkit::configure_key(config, by, openat);
    EXPECT_EQ(config.key_field.access, TPKIT_FIELD_STR_USER);
    EXPECT_EQ(config.key_field.offset, openat.field("filename")->offset);
    EXPECT_FALSE(tpkit::key_is_number(by, TPKIT_KEY_FIELD, openat));
    tpkit_engine_key k{};
    std::strcpy(k.str, "/etc/passwd");
    EXPECT_EQ(tpkit::key_text(k, by, TPKIT_KEY_FIELD, openat), "/etc/passwd");
    k.flags = TPKIT_KEY_CUT;
    EXPECT_EQ(tpkit::key_text(k, by, TPKIT_KEY_FIELD, openat), "/etc/passwd…");
    // Other pointers stay numbers.
    auto read = reference_format("linux-6.18", "syscalls", "sys_enter_read");
    tpkit::configure_key(config, tpkit::parse_key("buf", {}), read);
    EXPECT_EQ(config.key_field.access, TPKIT_FIELD_LOAD);
}
