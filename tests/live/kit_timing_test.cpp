// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// timing.bpf.h against real sleeps: tests/bpf/kit_timing.bpf.c times each nanosleep of this
// process from sys_enter to sys_exit, keyed by tid.
#include "kit_probe.hpp"
#include "live.hpp"

#include "tpkit/bpf/maps.hpp"

#include "../bpf/kit_timing.h"
#include "kit_timing.skel.h"

#include <bpf/bpf.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::blocked_in_syscall;
using tpkit::live::KitProbe;
using tpkit::live::wait_until;
using Probe = KitProbe<kit_timing_bpf>;

namespace {

pid_t gettid_() { return static_cast<pid_t>(syscall(SYS_gettid)); }

std::uint64_t monotonic_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// nanosleep(2) itself: glibc's nanosleep() calls clock_nanosleep.
long raw_nanosleep(std::uint64_t ns)
{
    timespec ts{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
    return syscall(SYS_nanosleep, &ts, nullptr);
}

std::size_t map_keys(bpf_map* map)
{
    std::size_t n = 0;
    __u32 key = 0, next = 0;
    for (const void* prev = nullptr; bpf_map_get_next_key(bpf_map__fd(map), prev, &next) == 0; prev = &key) {
        key = next;
        n++;
    }
    return n;
}

// A thread that sleeps in nanosleep(2) until it is sent SIGUSR1.
class Sleeper {
public:
    Sleeper()
        : thread_([this] {
              tid_ = gettid_();
              while (!woken_)
                  raw_nanosleep(60'000'000'000ull);
              done_ = true;
          })
    {
        wait_until([this] { return tid_ != 0; }, 10s);
    }
    ~Sleeper() { wake(); }
    pid_t tid() const { return tid_; }
    void wake()
    {
        if (!thread_.joinable())
            return;
        woken_ = true;
        // Again until it is out: a signal sent just before it enters a sleep ends nothing.
        do
            pthread_kill(thread_.native_handle(), SIGUSR1);
        while (!wait_until([this] { return done_.load(); }, 10ms));
        thread_.join();
    }

private:
    std::atomic<pid_t> tid_{0};
    std::atomic<bool> woken_{false}, done_{false};
    std::thread thread_;
};

// SIGUSR1 ends a sleep (EINTR) and does nothing else, while the test runs.
class WakeSignal {
public:
    WakeSignal()
    {
        struct sigaction sa{};
        sa.sa_handler = [](int) {};
        sigaction(SIGUSR1, &sa, &old_);
    }
    ~WakeSignal() { sigaction(SIGUSR1, &old_, nullptr); }

private:
    struct sigaction old_{};
};

} // namespace

// Each sleep of this thread gives exactly one elapsed time, at least what was asked for.
TEST(KitTimingExact, EveryNanosleepTimedAtLeastItsLength)
{
    TPKIT_REQUIRE_LIVE();
    const std::vector<std::uint64_t> asked_ns{1'000'000, 3'000'000, 7'000'000, 20'000'000, 50'000'000};
    Probe probe("kit_timing", tpkit::Transport::ring_buffer, [](kit_timing_bpf& skel) {
        skel.rodata->tpkit_target_tgid = static_cast<__u32>(getpid());
    });
    std::vector<std::uint64_t> measured_ns;
    for (std::uint64_t ns : asked_ns) {
        std::uint64_t before = monotonic_ns();
        ASSERT_EQ(raw_nanosleep(ns), 0);
        measured_ns.push_back(monotonic_ns() - before);
    }

    auto events = probe.events<kit_timing_event>();
    ASSERT_EQ(events.size(), asked_ns.size());
    for (std::size_t i = 0; i < events.size(); i++) {
        EXPECT_EQ(events[i].tid, static_cast<__u32>(gettid_()));
        EXPECT_GE(events[i].elapsed_ns, asked_ns[i]) << "sleep " << i;
        // Inside the syscall: no longer than the sleep measured around it from user space (give
        // or take the NMI-safe clock's lag behind clock_gettime's, well under a millisecond).
        EXPECT_LE(events[i].elapsed_ns, measured_ns[i] + 1'000'000) << "sleep " << i;
    }
    EXPECT_EQ(tpkit::sum_percpu_u64(probe.skel().maps.tpkit_missed), 0u);
    EXPECT_EQ(probe.lost(), 0u);
}

// A sleep that began before attach has no start: no elapsed time. A start that finds the map
// full is counted in tpkit_missed, and its end has no start either.
TEST(KitTimingExact, StartBeforeAttachAndFullMapGiveNoTime)
{
    TPKIT_REQUIRE_LIVE();
    WakeSignal wake_signal;
    Sleeper before_attach;
    ASSERT_TRUE(wait_until([&] { return blocked_in_syscall(before_attach.tid(), SYS_nanosleep); }, 10s));

    Probe probe("kit_timing", tpkit::Transport::ring_buffer, [](kit_timing_bpf& skel) {
        skel.rodata->tpkit_target_tgid = static_cast<__u32>(getpid());
        if (bpf_map__set_max_entries(skel.maps.sleep_starts, 1) != 0)
            throw std::runtime_error("cannot size sleep_starts");
    });
    Sleeper after_attach; // takes the map's one entry
    ASSERT_TRUE(wait_until([&] { return map_keys(probe.skel().maps.sleep_starts) == 1; }, 10s));
    std::uint64_t asleep_since = monotonic_ns();

    ASSERT_EQ(raw_nanosleep(1'000'000), 0); // its start finds the map full
    EXPECT_EQ(tpkit::sum_percpu_u64(probe.skel().maps.tpkit_missed), 1u);

    before_attach.wake();
    std::uint64_t asleep_for = monotonic_ns() - asleep_since;
    after_attach.wake();

    auto events = probe.events<kit_timing_event>();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].tid, static_cast<__u32>(after_attach.tid()));
    EXPECT_GE(events[0].elapsed_ns, asleep_for);
    EXPECT_EQ(map_keys(probe.skel().maps.sleep_starts), 0u);
    EXPECT_EQ(tpkit::sum_percpu_u64(probe.skel().maps.tpkit_missed), 1u);
    EXPECT_EQ(probe.lost(), 0u);
}
