// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Counters keyed by stacks print folded, as flamegraph.pl reads them (root first, ';' between
// frames, then the count); JSON gives a stack as an array of frames and each key part under
// its own name; numeric keys sort as numbers.
#include "tpkit/output/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

std::string rendered(const tpkit::Reading& reading, bool json)
{
    tpkit::Output out(-1);
    json ? tpkit::render_json(reading, out, 7) : tpkit::render_text(reading, out);
    return out.buffer();
}

tpkit::Reading stack_counts()
{
    tpkit::Reading reading;
    reading.folded = true;
    reading.counter_labels = {"event", "comm", "ustack", "kstack"};
    // Innermost first, as a stack walk gives them.
    reading.metrics.push_back({"count", "", "", {{"event", "raw_syscalls:sys_enter"}, {"comm", "bash"},
                                                 tpkit::stack_label("ustack", {"write", "main"}),
                                                 tpkit::stack_label("kstack", {"ksys_write", "do_syscall_64"})},
                               std::uint64_t{5}});
    // A kernel thread: no user stack.
    reading.metrics.push_back({"count", "", "", {{"event", "raw_syscalls:sys_enter"}, {"comm", "kworker/0:1"},
                                                 tpkit::stack_label("ustack", {}),
                                                 tpkit::stack_label("kstack", {"schedule"})},
                               std::uint64_t{2}});
    return reading;
}

} // namespace

TEST(MetricsStacks, StackLabelIsRootFirst)
{
    auto label = tpkit::stack_label("kstack", {"__schedule", "schedule", "do_nanosleep"});
    EXPECT_TRUE(label.stack);
    EXPECT_EQ(label.frames, (std::vector<std::string>{"do_nanosleep", "schedule", "__schedule"}));
    EXPECT_EQ(label.value, "do_nanosleep;schedule;__schedule");
}

TEST(MetricsStacks, FoldedLinesForFlameGraphs)
{
    EXPECT_EQ(rendered(stack_counts(), false),
              "bash;main;write;do_syscall_64;ksys_write 5\n"
              "kworker/0:1;schedule 2\n");
}

TEST(MetricsStacks, FoldedLinesAreRootFirstWhateverTheKeysOrder)
{
    // --by kstack,ustack,cpu,pid,comm: the process at the root, then the CPU, the user frames and
    // the kernel frames at the leaf.
    tpkit::Reading reading;
    reading.folded = true;
    reading.counter_labels = {"event", "kstack", "ustack", "cpu", "pid", "comm"};
    reading.metrics.push_back({"count", "", "", {{"event", "raw_syscalls:sys_enter"},
                                                 tpkit::stack_label("kstack", {"ksys_write", "do_syscall_64"}),
                                                 tpkit::stack_label("ustack", {"write", "main"}),
                                                 {"cpu", "1", true}, {"pid", "181", true}, {"comm", "bash"}},
                               std::uint64_t{5}});
    EXPECT_EQ(rendered(reading, false), "bash;181;1;main;write;do_syscall_64;ksys_write 5\n");
    // --by kstack,comm as tpcount keys it: comm at the root, not at the leaf.
    reading.metrics[0].labels = {{"event", "raw_syscalls:sys_enter"},
                                 tpkit::stack_label("kstack", {"ksys_write", "do_syscall_64"}),
                                 {"comm", "bash"}};
    EXPECT_EQ(rendered(reading, false), "bash;do_syscall_64;ksys_write 5\n");
    // The table and JSON keep the key's order.
    EXPECT_EQ(rendered(reading, true),
              "{\"type\":\"count\",\"time_ns\":7,\"event\":\"raw_syscalls:sys_enter\","
              "\"kstack\":[\"do_syscall_64\",\"ksys_write\"],\"comm\":\"bash\",\"count\":5}\n");
}

TEST(MetricsStacks, SeveralEventsBeginEachFoldedLine)
{
    auto reading = stack_counts();
    reading.metrics[1].labels[0].value = "sched:sched_switch";
    EXPECT_EQ(rendered(reading, false),
              "raw_syscalls:sys_enter;bash;main;write;do_syscall_64;ksys_write 5\n"
              "sched:sched_switch;kworker/0:1;schedule 2\n");
}

TEST(MetricsStacks, JsonStacksAreArraysAndPartsHaveTheirNames)
{
    EXPECT_EQ(rendered(stack_counts(), true),
              "{\"type\":\"count\",\"time_ns\":7,\"event\":\"raw_syscalls:sys_enter\",\"comm\":\"bash\","
              "\"ustack\":[\"main\",\"write\"],\"kstack\":[\"do_syscall_64\",\"ksys_write\"],\"count\":5}\n"
              "{\"type\":\"count\",\"time_ns\":7,\"event\":\"raw_syscalls:sys_enter\",\"comm\":\"kworker/0:1\","
              "\"ustack\":[],\"kstack\":[\"schedule\"],\"count\":2}\n");
    tpkit::Reading reading;
    reading.counter_labels = {"pid", "comm"};
    reading.metrics.push_back({"count", "", "", {{"pid", "12", true}, {"comm", "bash"}},
                               std::uint64_t{5}});
    EXPECT_EQ(rendered(reading, true),
              "{\"type\":\"count\",\"time_ns\":7,\"pid\":12,\"comm\":\"bash\",\"count\":5}\n");
}

TEST(MetricsStacks, NumbersSortAsNumbers)
{
    using Labels = std::vector<tpkit::Label>;
    std::vector<Labels> keys{{{"pid", "10", true}}, {{"pid", "9", true}}, {{"pid", "-2", true}},
                             {{"pid", "100", true}}, {{"pid", "-11", true}}};
    std::sort(keys.begin(), keys.end(), tpkit::labels_less);
    std::vector<std::string> order;
    for (const auto& k : keys)
        order.push_back(k[0].value);
    EXPECT_EQ(order, (std::vector<std::string>{"-11", "-2", "9", "10", "100"}));
    // Text as text; later parts break ties.
    EXPECT_TRUE(tpkit::labels_less({{"comm", "10"}}, {{"comm", "9"}}));
    EXPECT_TRUE(tpkit::labels_less({{"pid", "9", true}, {"comm", "b"}},
                                   {{"pid", "9", true}, {"comm", "c"}}));
    EXPECT_FALSE(tpkit::labels_less({{"pid", "9", true}}, {{"pid", "9", true}}));
}
