// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// core_fixes.bpf.h on this kernel: tests/bpf/kit_core_fixes.bpf.c reports prev's state at every
// switch away from one thread, which sleeps a known number of times.
#include "kit_probe.hpp"
#include "live.hpp"

#include "../bpf/kit_core_fixes.h"
#include "kit_core_fixes.skel.h"

#include <bpf/btf.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::blocked_in_syscall;
using tpkit::live::KitProbe;
using tpkit::live::wait_until;

namespace {

// include/linux/sched.h, as core_fixes.bpf.h has them
constexpr std::int64_t task_interruptible = 1, task_report = 0x7f;

// A thread that waits blocked in read(2) until run(), then runs body; run() returns when it ends.
class GatedThread {
public:
    explicit GatedThread(std::function<void()> body)
    {
        if (pipe(gate_) != 0)
            throw std::runtime_error("pipe failed");
        thread_ = std::thread([this, body = std::move(body)] {
            tid_ = static_cast<pid_t>(syscall(SYS_gettid));
            char byte;
            if (read(gate_[0], &byte, 1) == 1)
                body();
        });
    }
    ~GatedThread()
    {
        run();
        close(gate_[0]);
        close(gate_[1]);
    }
    pid_t tid() const { return tid_; }
    void run()
    {
        if (!thread_.joinable())
            return;
        if (write(gate_[1], "x", 1) != 1)
            throw std::runtime_error("write failed");
        thread_.join();
    }

private:
    int gate_[2] = {-1, -1};
    std::atomic<pid_t> tid_{0};
    std::thread thread_;
};

constexpr int sleeps = 5;

// Every switch away from a thread that sleeps `sleeps` times in nanosleep(2), as the test program
// reports it; open_options as KitProbe takes them.
std::vector<kit_switch_event> switches_of_sleeps(pid_t& sleeper_tid, const bpf_object_open_opts* open_options = nullptr)
{
    GatedThread sleeper([] {
        for (int i = 0; i < sleeps; i++) {
            timespec ts{0, 20'000'000};
            syscall(SYS_nanosleep, &ts, nullptr);
        }
    });
    // Off the CPU before the program is attached: that switch is not one of the sleeps.
    if (!wait_until([&] { return sleeper.tid() != 0 && blocked_in_syscall(sleeper.tid(), SYS_read); }, 10s))
        throw std::runtime_error("the thread never blocked in read(2)");
    sleeper_tid = sleeper.tid();
    KitProbe<kit_core_fixes_bpf> probe(
        "kit_core_fixes", tpkit::Transport::ring_buffer,
        [&](kit_core_fixes_bpf& skel) { skel.rodata->target_tid = static_cast<__u32>(sleeper_tid); },
        open_options);
    sleeper.run();
    EXPECT_EQ(probe.lost(), 0u);
    return probe.events<kit_switch_event>();
}

// The sleeps among the switches: exactly one each, TASK_INTERRUPTIBLE by either reading (with
// TASK_FREEZABLE, 0x2000, on top since 6.1), and not runnable; a preemption leaves it runnable.
void expect_sleeps_seen(const std::vector<kit_switch_event>& events, pid_t tid, bool three_args)
{
    int asleep = 0;
    ASSERT_FALSE(events.empty());
    for (const auto& e : events) {
        EXPECT_EQ(e.prev_tid, static_cast<__u32>(tid));
        EXPECT_EQ(e.three_args, three_args ? 1u : 0u);
        EXPECT_EQ(e.four_args, three_args ? 0u : 1u);
        if ((e.prev_state & task_report) == task_interruptible) {
            asleep++;
            EXPECT_EQ(e.task_state & task_report, task_interruptible);
            EXPECT_EQ(e.prev_runnable, 0u);
        } else if (e.prev_state == 0) { // preempted
            EXPECT_EQ(e.prev_runnable, 1u);
        }
    }
    EXPECT_EQ(asleep, sleeps);
}

// This kernel's BTF as a kernel before both changes would have it: task_struct's __state named
// state, sched_switch's raw tracepoint without prev_state. Written to a file that goes away with
// the object.
class BtfBeforeTheChanges {
public:
    BtfBeforeTheChanges()
    {
        std::unique_ptr<btf, void (*)(btf*)> kernel(btf__parse("/sys/kernel/btf/vmlinux", nullptr), &btf__free);
        if (!kernel)
            throw std::runtime_error("cannot read /sys/kernel/btf/vmlinux");
        btf* b = kernel.get();
        // btf_trace_sched_switch: typedef → pointer → prototype; a new prototype without the last
        // argument, pointed to by a new pointer.
        int typedef_id = btf__find_by_name_kind(b, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
        if (typedef_id < 0)
            throw std::runtime_error("no btf_trace_sched_switch");
        const btf_type* pointer = btf__type_by_id(b, btf__type_by_id(b, typedef_id)->type);
        int proto_id = static_cast<int>(pointer->type);
        const btf_type* proto = btf__type_by_id(b, proto_id);
        std::vector<btf_param> params(btf_params(proto), btf_params(proto) + btf_vlen(proto));
        int old_proto = btf__add_func_proto(b, static_cast<int>(proto->type));
        for (std::size_t i = 0; i + 1 < params.size(); i++)
            btf__add_func_param(b, "", static_cast<int>(params[i].type));
        int old_pointer = btf__add_ptr(b, old_proto);
        const_cast<btf_type*>(btf__type_by_id(b, typedef_id))->type = static_cast<__u32>(old_pointer);

        int task_id = btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT);
        int state_name = btf__add_str(b, "state");
        if (task_id < 0 || state_name < 0 || old_proto < 0 || old_pointer < 0)
            throw std::runtime_error("cannot edit the kernel's BTF");
        auto* task = const_cast<btf_type*>(btf__type_by_id(b, task_id));
        for (unsigned i = 0; i < btf_vlen(task); i++)
            if (std::string(btf__name_by_offset(b, btf_members(task)[i].name_off)) == "__state")
                btf_members(task)[i].name_off = static_cast<__u32>(state_name);

        __u32 size = 0;
        const void* raw = btf__raw_data(b, &size);
        char name[] = "/tmp/tpkit-old-btf-XXXXXX";
        int fd = mkstemp(name);
        if (fd < 0)
            throw std::runtime_error("cannot create a temporary file");
        path_ = name;
        bool written = raw && write(fd, raw, size) == static_cast<ssize_t>(size);
        close(fd);
        if (!written)
            throw std::runtime_error("cannot write " + path_);
    }
    ~BtfBeforeTheChanges() { unlink(path_.c_str()); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

} // namespace

// Each nanosleep switches the thread out once, asleep (TASK_INTERRUPTIBLE): exactly as many
// switches with that state as sleeps, whether the state comes from sched_switch's argument or
// from task_struct::__state. Both reference kernels (6.1, 6.18) pass prev_state.
TEST(KitCoreFixesExact, SchedSwitchPrevStateOfSleeps)
{
    TPKIT_REQUIRE_LIVE();
    pid_t tid = 0;
    auto events = switches_of_sleeps(tid);
    expect_sleeps_seen(events, tid, false);
}

// The same program relocated against this kernel's BTF as it was before 5.14 and 5.18: the
// ___old flavours are chosen (three arguments, task_struct::state), and they still read the
// state right, since only names and the prototype changed, not the memory.
TEST(KitCoreFixesExact, OldLayoutsChosenOnAnOldBtf)
{
    TPKIT_REQUIRE_LIVE();
    BtfBeforeTheChanges old_btf;
    bpf_object_open_opts options{};
    options.sz = sizeof(options);
    options.btf_custom_path = old_btf.path().c_str();
    pid_t tid = 0;
    auto events = switches_of_sleeps(tid, &options);
    expect_sleeps_seen(events, tid, true);
}
