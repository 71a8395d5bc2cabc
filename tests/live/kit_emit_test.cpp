// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// emit.bpf.h's events of varying size against real syscalls: tests/bpf/kit_emit.bpf.c sends
// the path of each openat(2) of this thread, as long as it is, through both transports.
#include "kit_probe.hpp"
#include "live.hpp"

#include "../bpf/kit_emit.h"
#include "kit_emit.skel.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <string>
#include <vector>

using tpkit::live::KitProbe;

namespace {

constexpr std::size_t path_offset = offsetof(kit_emit_event, path);

// A path of exactly `length` characters that names nothing.
std::string path_of_length(std::size_t length)
{
    std::string path = "/nonexistent-kit-emit/";
    for (std::size_t i = path.size(); i < length; i++)
        path += static_cast<char>('a' + i % 26);
    return path.substr(0, length);
}

// This thread on the CPU it is on, while it lives: the perf buffer keeps order only per CPU.
class PinnedToThisCpu {
public:
    PinnedToThisCpu()
    {
        sched_getaffinity(0, sizeof(old_), &old_);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu(), &one);
        sched_setaffinity(0, sizeof(one), &one);
    }
    ~PinnedToThisCpu() { sched_setaffinity(0, sizeof(old_), &old_); }

private:
    cpu_set_t old_;
};

void expect_paths_sent_exactly(tpkit::Transport transport)
{
    // Long before short: a short event must not show the bytes of a longer one before it.
    const std::vector<std::size_t> lengths{KIT_EMIT_PATH_MAX + 900, KIT_EMIT_PATH_MAX - 1, 3000, 1, 2,
                                           7, 8, 9, 100, 255, 256, KIT_EMIT_PATH_MAX - 2};
    KitProbe<kit_emit_bpf> probe("kit_emit", transport, [](kit_emit_bpf& skel) {
        skel.rodata->tpkit_target_tid = static_cast<__u32>(syscall(SYS_gettid));
    });
    {
        PinnedToThisCpu pinned;
        for (std::size_t length : lengths)
            syscall(SYS_openat, AT_FDCWD, path_of_length(length).c_str(), O_RDONLY);
    }

    const auto& records = probe.records();
    ASSERT_EQ(records.size(), lengths.size());
    auto events = probe.events<kit_emit_event>();
    for (std::size_t i = 0; i < lengths.size(); i++) {
        // Past PATH_MAX - 1 characters the path is cut, still with its NUL.
        std::size_t kept = std::min(lengths[i], std::size_t{KIT_EMIT_PATH_MAX - 1});
        const kit_emit_event& e = events[i];
        SCOPED_TRACE("path of " + std::to_string(lengths[i]) + " characters");
        ASSERT_EQ(e.path_size, kept + 1);
        EXPECT_EQ(std::string(e.path, kept), path_of_length(kept));
        EXPECT_EQ(e.path[kept], '\0');
        std::size_t used = path_offset + e.path_size, size = records[i].size();
        if (transport == tpkit::Transport::ring_buffer) {
            // Exactly the used prefix; read into a zeroed event, the rest stays zero.
            EXPECT_EQ(size, used);
            std::size_t nonzero = 0;
            for (std::size_t j = kept + 1; j < sizeof(e.path); j++)
                nonzero += e.path[j] != 0;
            EXPECT_EQ(nonzero, 0u);
        } else {
            // The perf buffer pads a record to 4 modulo 8 bytes (its u32 size then 8-byte
            // alignment), with bytes nobody wrote: only path_size says what is valid.
            EXPECT_GE(size, used);
            EXPECT_LT(size, used + 8);
            EXPECT_EQ(size % 8, 4u);
        }
        EXPECT_EQ(e.task.tid, static_cast<__u32>(syscall(SYS_gettid)));
        EXPECT_EQ(e.task.pid, static_cast<__u32>(getpid()));
    }
    EXPECT_EQ(probe.lost(), 0u);
}

} // namespace

TEST(KitEmitExact, VariableSizeEventsThroughTheRingBuffer)
{
    TPKIT_REQUIRE_LIVE();
    expect_paths_sent_exactly(tpkit::Transport::ring_buffer);
}

TEST(KitEmitExact, VariableSizeEventsThroughThePerfBuffer)
{
    TPKIT_REQUIRE_LIVE();
    expect_paths_sent_exactly(tpkit::Transport::perf_buffer);
}
