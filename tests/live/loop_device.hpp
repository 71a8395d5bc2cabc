// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What the block tools' tests share: a loop device of the test's own over a file (a disk on
// which only the test does I/O, detached on every exit path), direct I/O on it, and the tools
// started until attached.
#pragma once

#include "tool_run.hpp"

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tpkit::live {

class LoopDevice {
public:
    // A new loop device over a zero-filled file of `bytes` (removed at once: the device keeps it),
    // with `partitions` partitions of 1 MiB each from its second MiB on.
    explicit LoopDevice(std::size_t bytes = 4 << 20, int partitions = 0);
    // Detaches it. Should the test die first, the kernel detaches it when its last descriptor
    // closes (LO_FLAGS_AUTOCLEAR).
    ~LoopDevice();
    LoopDevice(const LoopDevice&) = delete;
    LoopDevice& operator=(const LoopDevice&) = delete;

    const std::string& name() const { return name_; } // "loop3"
    std::string path() const { return "/dev/" + name_; }
    // Partition `number` (from 1): "loop3p1", and its first sector on the disk.
    std::string partition_name(int number) const { return name_ + "p" + std::to_string(number); }
    static std::uint64_t partition_start(int number) { return 2048u * number; }

private:
    std::string name_;
    int fd_ = -1;
};

// One direct (O_DIRECT) I/O: `bytes` at byte `offset` of the device (multiples of 4096).
struct DirectIo {
    std::uint64_t offset;
    std::size_t bytes;
};

// Reads or writes each of `ios` in turn with O_DIRECT on `device` from this process, each one
// request to the device; throws when one is not done in full.
void read_direct(const std::string& device, const std::vector<DirectIo>& ios);
void write_direct(const std::string& device, const std::vector<DirectIo>& ios);

// `tool --json ARGS`, once it holds `links` BPF links.
std::unique_ptr<ToolRun> start_attached(const std::string& tool, std::vector<std::string> args,
                                        std::size_t links);

// The links of a tool that follows requests from their submission (block.bpf.h's
// tpkit_request_submitted): block_rq_insert, _issue, _complete, and block_io_start where the
// kernel has it.
std::size_t request_tracking_links();

// This process's command name, as the kernel keeps it.
std::string own_comm();

} // namespace tpkit::live
