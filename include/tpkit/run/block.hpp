// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Block devices and requests for the block tools: disks by name (-d), names by device number,
// and a request's operation and flags (<tpkit/block.h>) as text.
#pragma once

#include "tpkit/block.h"
#include "tpkit/bpf/skeleton.hpp"
#include "tpkit/support/error.hpp"

#include <bpf/libbpf.h>

#include <cstdint>
#include <map>
#include <string>

namespace tpkit {

struct BlockDevice {
    std::string name;
    std::uint32_t dev = 0; // the kernel's dev_t (major << 20 | minor)
    bool partition = false;
};

// A disk or partition by name ("sda", "loop3", "nvme0n1p2", also "/dev/sda"), as
// /sys/class/block lists it; Error(unknown_target) when there is none.
BlockDevice find_block_device(const std::string& name);

// The filter of block.bpf.h: the requests to `disk` (empty: all).
template <class Skel>
void apply_disk_filter(Skel& skel, const std::string& disk)
{
    if (disk.empty())
        return;
    BlockDevice device = find_block_device(disk);
    (device.partition ? skel.rodata->tpkit_target_partition : skel.rodata->tpkit_target_disk) =
        device.dev;
}

// Before load, for tools that follow requests from their submission (block.bpf.h): their program
// io_start loads only where the kernel has block_io_start (6.5 and later).
template <class Skel>
void follow_requests_from_submission(Skel& skel)
{
    check_libbpf(bpf_program__set_autoload(skel.progs.io_start,
                                           kernel_has_raw_tracepoint("block_io_start")),
                 "cannot choose the block tools' programs");
}

// Block devices' names by dev_t, read from /sys/class/block and again for a device not seen
// yet; "MAJ:MIN" for one that is gone.
class BlockDeviceNames {
public:
    const std::string& name_of(std::uint32_t dev);

private:
    void load();
    std::map<std::uint32_t, std::string> names_;
};

// The operation's name as bcc's biolatency -F writes it ("Read", "Write", "Flush", …).
std::string request_op_name(std::uint32_t op);
// bcc's biolatency -F: the flags then the operation, each followed by '-' but the last
// ("Sync-Write", "Read").
std::string request_flags_text(std::uint32_t op, std::uint32_t flags);
// The kernel's rwbs letters (blk_fill_rwbs), as in the block tracepoints' records and bcc's
// biosnoop T column: F for a preflush, the operation (R, W, D, DE, F, N), then F (FUA),
// A (readahead), S (sync), M (metadata).
std::string request_rwbs(std::uint32_t op, std::uint32_t flags);

} // namespace tpkit
