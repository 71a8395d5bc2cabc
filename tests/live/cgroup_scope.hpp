// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A memory-limited cgroup for one live test, so that the test can make the kernel reclaim or
// OOM-kill inside it and nowhere else; it goes away, with anything left in it, on every path.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

// Skips the test, saying why, where no memory cgroup can be made.
#define TPKIT_REQUIRE_MEMORY_CGROUP()                                                      \
    do {                                                                                   \
        std::string tpkit_reason_ = ::tpkit::live::MemoryCgroup::unavailable_reason();     \
        if (!tpkit_reason_.empty())                                                        \
            GTEST_SKIP() << tpkit_reason_;                                                 \
    } while (0)

namespace tpkit::live {

class MemoryCgroup {
public:
    // Why no memory cgroup can be made here (no cgroup2 mount with the memory controller, no
    // cgroup v1 memory hierarchy: a chroot with /sys bound alone), "" when one can.
    static std::string unavailable_reason();

    // Makes a cgroup named after `name` and this process where the memory controller is: a child
    // of the cgroup2 mount (the controller enabled in its cgroup.subtree_control if it was not,
    // and disabled again at the end), else a child of the cgroup v1 memory hierarchy (where a
    // host keeps memory on v1). Its memory is limited to limit_bytes, with no swap. Throws
    // std::runtime_error saying why it cannot.
    MemoryCgroup(const std::string& name, std::uint64_t limit_bytes);
    // Kills what is still inside, waits until it is empty, removes it, restores the parent.
    ~MemoryCgroup();
    MemoryCgroup(const MemoryCgroup&) = delete;
    MemoryCgroup& operator=(const MemoryCgroup&) = delete;

    // Moves the process `pid` (all its threads) in.
    void add(pid_t pid) const;
    // A file of the cgroup: "memory.high" on v2, "memory.limit_in_bytes" on v1…
    void write(const std::string& file, const std::string& value) const;
    const std::string& path() const { return path_; }
    bool is_v2() const { return v2_; }

private:
    void remove() noexcept;

    std::string path_;
    std::string parent_;
    bool v2_ = false;
    bool enabled_memory_ = false; // we wrote +memory into the parent's subtree_control
};

// Memory events of every kind the memory tools watch, confined to a fresh 16 MiB memory cgroup: a
// child named `comm` makes the cgroup reclaim (pages it has lazily freed with MADV_FREE, which
// reclaim drops without swap), then allocates until the kernel OOM-kills it. Returns the child's
// pid once it is reaped; throws std::runtime_error when it was not OOM-killed.
pid_t run_memory_pressure(const std::string& comm);

} // namespace tpkit::live
