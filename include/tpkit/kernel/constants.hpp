// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Names of kernel constants that tools print: capabilities, and the flags and commands of the
// mount and sync syscalls. No name is typed by hand: the tables are generated at build time from
// the build's <linux/capability.h>, <linux/mount.h>, <sys/mount.h>, <sys/mman.h> and <fcntl.h>
// (cmake/gen-constant-tables.cmake), so a value newer than those headers shows as a number.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tpkit {

struct NamedConstant {
    std::uint64_t value;
    std::string_view name;
};

std::span<const NamedConstant> capabilities();      // CAP_CHOWN 0 ... (capability numbers)
std::span<const NamedConstant> mount_flags();       // MS_*: mount(2)
std::span<const NamedConstant> umount_flags();      // MNT_FORCE, ..., UMOUNT_NOFOLLOW: umount2(2)
std::span<const NamedConstant> fsopen_flags();      // FSOPEN_*
std::span<const NamedConstant> fsconfig_commands(); // FSCONFIG_* (values, not flags)
std::span<const NamedConstant> fsmount_flags();     // FSMOUNT_*
std::span<const NamedConstant> mount_attr_flags();  // MOUNT_ATTR_*: fsmount(2)'s attr_flags
std::span<const NamedConstant> move_mount_flags();  // MOVE_MOUNT_*
std::span<const NamedConstant> msync_flags();       // MS_ASYNC, MS_INVALIDATE, MS_SYNC: msync(2)
std::span<const NamedConstant> sync_file_range_flags(); // SYNC_FILE_RANGE_*

// The name of `value` in `table`; nullopt when the headers have none.
std::optional<std::string_view> constant_name(std::span<const NamedConstant> table,
                                              std::uint64_t value);

// Flags as their names joined by '|', lowest bit first, with the bits no name covers as one hex
// number at the end ("MS_NOSUID|MS_NODEV|0x200"); "0" when no bit is set. Only the table's
// one-bit values name bits.
std::string flag_names(std::span<const NamedConstant> table, std::uint64_t flags);

} // namespace tpkit
