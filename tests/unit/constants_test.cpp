// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/kernel/constants.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>

#include <set>

TEST(Constants, EveryCapabilityUpToTheLastHasItsName)
{
    std::set<std::uint64_t> numbers;
    for (const auto& c : tpkit::capabilities()) {
        EXPECT_EQ(c.name.rfind("CAP_", 0), 0u) << c.name;
        EXPECT_TRUE(numbers.insert(c.value).second) << "a second name for " << c.value;
    }
    // The header's own count: no gap, no alias (CAP_LAST_CAP is left out).
    EXPECT_EQ(numbers.size(), std::size_t(CAP_LAST_CAP + 1));
    EXPECT_EQ(*numbers.rbegin(), std::uint64_t(CAP_LAST_CAP));
    EXPECT_EQ(tpkit::constant_name(tpkit::capabilities(), CAP_SYS_ADMIN), "CAP_SYS_ADMIN");
    EXPECT_EQ(tpkit::constant_name(tpkit::capabilities(), CAP_SETUID), "CAP_SETUID");
    EXPECT_EQ(tpkit::constant_name(tpkit::capabilities(), CAP_CHOWN), "CAP_CHOWN");
    EXPECT_EQ(tpkit::constant_name(tpkit::capabilities(), CAP_LAST_CAP + 1), std::nullopt);
}

TEST(Constants, MountFlagsByBit)
{
    using tpkit::flag_names;
    EXPECT_EQ(flag_names(tpkit::mount_flags(), 0), "0");
    EXPECT_EQ(flag_names(tpkit::mount_flags(), MS_NOSUID | MS_NODEV | MS_NOEXEC),
              "MS_NOSUID|MS_NODEV|MS_NOEXEC");
    // Each bit by its own name (bcc's table shifts the names of bits 10 and up by one).
    EXPECT_EQ(flag_names(tpkit::mount_flags(), MS_NOATIME), "MS_NOATIME");
    EXPECT_EQ(flag_names(tpkit::mount_flags(), MS_BIND | MS_REC), "MS_BIND|MS_REC");
    EXPECT_EQ(flag_names(tpkit::mount_flags(), MS_REC | MS_PRIVATE), "MS_REC|MS_PRIVATE");
    EXPECT_EQ(flag_names(tpkit::mount_flags(), MS_SILENT), "MS_SILENT"); // not MS_VERBOSE
    EXPECT_EQ(flag_names(tpkit::mount_flags(), std::uint32_t(MS_NOUSER)), "MS_NOUSER");
    // Bit 9 has no name; bits above 31 neither.
    EXPECT_EQ(flag_names(tpkit::mount_flags(), MS_RDONLY | 0x200), "MS_RDONLY|0x200");
    EXPECT_EQ(flag_names(tpkit::mount_flags(), 0x200 | (std::uint64_t(1) << 40)), "0x10000000200");
}

TEST(Constants, TheOtherMountAndSyncCallsHaveTheirOwnFlags)
{
    using tpkit::flag_names;
    EXPECT_EQ(flag_names(tpkit::umount_flags(), MNT_DETACH | UMOUNT_NOFOLLOW),
              "MNT_DETACH|UMOUNT_NOFOLLOW");
    EXPECT_EQ(flag_names(tpkit::umount_flags(), MNT_FORCE), "MNT_FORCE");
    EXPECT_EQ(flag_names(tpkit::fsopen_flags(), FSOPEN_CLOEXEC), "FSOPEN_CLOEXEC");
    EXPECT_EQ(flag_names(tpkit::fsmount_flags(), FSMOUNT_CLOEXEC), "FSMOUNT_CLOEXEC");
    EXPECT_EQ(flag_names(tpkit::mount_attr_flags(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOATIME),
              "MOUNT_ATTR_RDONLY|MOUNT_ATTR_NOATIME");
    EXPECT_EQ(flag_names(tpkit::move_mount_flags(), MOVE_MOUNT_F_EMPTY_PATH),
              "MOVE_MOUNT_F_EMPTY_PATH");
    EXPECT_EQ(tpkit::constant_name(tpkit::fsconfig_commands(), FSCONFIG_SET_STRING),
              "FSCONFIG_SET_STRING");
    EXPECT_EQ(tpkit::constant_name(tpkit::fsconfig_commands(), FSCONFIG_CMD_CREATE),
              "FSCONFIG_CMD_CREATE");
    EXPECT_EQ(flag_names(tpkit::msync_flags(), MS_SYNC | MS_INVALIDATE), "MS_INVALIDATE|MS_SYNC");
    EXPECT_EQ(flag_names(tpkit::sync_file_range_flags(), SYNC_FILE_RANGE_WRITE_AND_WAIT),
              "SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER");
    // Masks and sizes are not values of their families.
    for (const auto& c : tpkit::mount_attr_flags())
        EXPECT_TRUE(c.name != "MOUNT_ATTR__ATIME" && c.name != "MOUNT_ATTR_SIZE_VER0") << c.name;
    for (const auto& c : tpkit::move_mount_flags())
        EXPECT_NE(c.name, "MOVE_MOUNT__MASK");
}
