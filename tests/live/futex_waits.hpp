// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Futex waits that end by a wake (futex(2) returns 0), of known number and length, for the tools
// that measure contention (futexctn) and who wakes whom (wakeuptime): the thread group leader waits on one futex word, each time
// woken by a second thread once that has seen it asleep inside futex(2) and slept a known time.
// The word stays 0 throughout, so each wait ends by that wake.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <string_view>

namespace tpkit::live {

// The word waited on. fork() keeps addresses: a child's word is at this address too.
inline int futex_word = 0;

inline long futex_on_word(int op, int value)
{
    return syscall(SYS_futex, &futex_word, op, value, nullptr, nullptr, 0);
}

// The word's address as futexctn's -l takes it and its JSON shows it ("0x7f…").
inline std::string futex_word_address()
{
    char text[32];
    std::snprintf(text, sizeof(text), "0x%lx", reinterpret_cast<unsigned long>(&futex_word));
    return text;
}

namespace futex_detail {

struct Plan {
    int rounds;
    std::array<long, 2> sleeps_us; // the waker's sleep before the wake of round i: [i % 2]
    const char* waker_name;        // the waker thread's comm, or nullptr: the leader's
};

// The waits the leader has begun: the waker wakes round i once it is i + 1 and the leader sleeps
// inside futex(2), so that it never takes the end of the previous wait for this one.
inline int waits_begun = 0;

inline void sleep_us(long us)
{
    timespec ts{us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

// Whether the thread group leader (/proc/self) sleeps inside futex(2) now: the kernel shows a
// task's system call only while it is not running ("running" otherwise).
inline bool leader_in_futex()
{
    int fd = open("/proc/self/syscall", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[32] = {};
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    char expected[16];
    int len = std::snprintf(expected, sizeof(expected), "%d ", static_cast<int>(SYS_futex));
    return n > len && std::string_view(buf, len) == std::string_view(expected, len);
}

// The leader's voluntary context switches (blocks) before it began the current wait.
inline long blocks_before_wait = 0;

// The leader's voluntary context switches so far (/proc/self/status is the leader's own).
inline long leader_blocks()
{
    FILE* status = std::fopen("/proc/self/status", "re");
    if (!status)
        return -1;
    char line[128];
    long blocks = -1;
    while (std::fgets(line, sizeof(line), status))
        if (std::sscanf(line, "voluntary_ctxt_switches: %ld", &blocks) == 1)
            break;
    std::fclose(status);
    return blocks;
}

// Each round, once the leader waits, sleeps then wakes it. Its result: 0, or the round whose
// wake found no waiter.
inline void* waker(void* arg)
{
    const Plan& plan = *static_cast<const Plan*>(arg);
    if (plan.waker_name)
        prctl(PR_SET_NAME, plan.waker_name);
    for (long i = 0; i < plan.rounds; i++) {
        // Inside futex(2) and switched out asleep: a leader preempted inside futex(2) before
        // it sleeps is in the call too, but its sleep begins only when it runs again.
        while (__atomic_load_n(&waits_begun, __ATOMIC_ACQUIRE) != i + 1 || !leader_in_futex() ||
               leader_blocks() <= __atomic_load_n(&blocks_before_wait, __ATOMIC_ACQUIRE))
            sleep_us(100);
        sleep_us(plan.sleeps_us[i % 2]);
        if (futex_on_word(FUTEX_WAKE_PRIVATE, 1) != 1)
            return reinterpret_cast<void*>(i + 1);
    }
    return nullptr;
}

} // namespace futex_detail

// From the thread group leader: ROUNDS waits on futex_word, each woken after SLEEPS_US[i % 2]
// microseconds and the scheduler's delays. WAITED_NS, when given, gets how long each futex call
// took as the leader saw it: at least what the kernel measures between its entry and exit.
// WAKER_NAME, when given, names the waking thread (its comm) apart from the leader.
// Returns 0, or what went wrong (an exit code: 2 and 3 the thread, 20 + i the wait of round i,
// 30 + i its wake).
inline int woken_futex_waits(int rounds, std::array<long, 2> sleeps_us, long* waited_ns = nullptr,
                             const char* waker_name = nullptr)
{
    futex_detail::Plan plan{rounds, sleeps_us, waker_name};
    __atomic_store_n(&futex_detail::waits_begun, 0, __ATOMIC_RELEASE);
    pthread_t thread;
    if (pthread_create(&thread, nullptr, futex_detail::waker, &plan) != 0)
        return 2;
    for (int i = 0; i < rounds; i++) {
        timespec start, end;
        __atomic_store_n(&futex_detail::blocks_before_wait, futex_detail::leader_blocks(),
                         __ATOMIC_RELEASE);
        clock_gettime(CLOCK_MONOTONIC, &start);
        __atomic_store_n(&futex_detail::waits_begun, i + 1, __ATOMIC_RELEASE);
        if (futex_on_word(FUTEX_WAIT_PRIVATE, 0) != 0)
            return 20 + i; // the waker may still wait for us: exiting ends it
        clock_gettime(CLOCK_MONOTONIC, &end);
        if (waited_ns)
            waited_ns[i] = (end.tv_sec - start.tv_sec) * 1000000000L + (end.tv_nsec - start.tv_nsec);
    }
    void* woken = nullptr;
    if (pthread_join(thread, &woken) != 0)
        return 3;
    return woken ? 30 + static_cast<int>(reinterpret_cast<long>(woken)) : 0;
}

} // namespace tpkit::live
