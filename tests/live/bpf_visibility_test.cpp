// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// bpf_sees_thread() on a thread that BPF sees: one of this process that sleeps and wakes.
#include "bpf_visibility.hpp"
#include "live.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

TEST(BpfVisibility, AThreadThatSwitchesIsSeen)
{
    TPKIT_REQUIRE_LIVE();
    std::atomic<pid_t> tid{0};
    std::atomic<bool> done{false};
    std::thread sleeper([&] {
        tid = static_cast<pid_t>(syscall(SYS_gettid));
        while (!done)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
    while (!tid)
        std::this_thread::yield();
    EXPECT_EQ(tpkit::live::bpf_sees_thread(tid), true);
    done = true;
    sleeper.join();
    // A thread that is gone says nothing either way.
    EXPECT_EQ(tpkit::live::bpf_sees_thread(tid), std::nullopt);
}
