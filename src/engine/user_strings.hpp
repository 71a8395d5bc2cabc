// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The strings a syscall's `const char *` arguments point to, which tpsnoop reads in BPF from the
// caller's memory and sends after the event's record (tpsnoop_header.user_strings), and those of
// other events' `char *` fields, read from kernel memory (rcu_utilization's `s`, a
// __tracepoint_string; maple_tree's `fn`, a __func__), which the kernel's %s prints; and how they
// are shown: as strace shows them, "/etc/passwd" in quotes, "..." after a string cut at
// TPKIT_USER_STR_MAX - 1 bytes; an unreadable pointer as the address the kernel prints.
#pragma once

#include "tpkit/engine.h"
#include "tpkit/kernel/format.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tpkit {

struct UserString {
    std::string_view text; // into the event's bytes
    bool cut = false;      // the string went on past text
    bool fault = false;    // the pointer could not be read: text is empty
};

struct UserStrings {
    std::uint32_t mask = 0;           // bit i: args[i]'s (or kernel string i's) string is in slots
    std::span<const std::byte> slots; // one struct tpkit_user_str per bit of mask, in bit order

    // The strings of a transport record whose header says MASK and RECORD_SIZE, from its bytes
    // after the header; none when they do not fit in BYTES.
    static UserStrings parse(std::uint32_t mask, std::uint32_t record_size,
                             std::span<const std::byte> bytes);
    // The string of field F of a record of FORMAT (a syscall's argument or a kernel string);
    // nullopt when not read.
    std::optional<UserString> find(const EventFormat& format, const Field& f) const;
};

// Whether F is a `char *` into kernel memory whose string tpsnoop reads at the event: any such
// field of an event other than syscalls:*, the first TPKIT_SNOOP_MAX_KERNEL_STRINGS of them.
bool is_kernel_string(const EventFormat& format, const Field& f);
// Those fields' offsets in tpkit_engine_config.kernel_string_offsets; returns how many.
std::uint8_t kernel_string_offsets(const EventFormat& format,
                                   std::uint32_t (&offsets)[TPKIT_SNOOP_MAX_KERNEL_STRINGS]);

// "text" with ", \ and control bytes escaped (\", \\, \x0a), then ... when it was cut.
void append_user_string(std::string& out, const UserString& s);
// The JSON members after field NAME's raw value (the pointer): ,"NAME_sym":"text" and
// ,"NAME_cut":true when it was cut; nothing for a pointer that could not be read.
void append_user_string_json(std::string& out, std::string_view name, const UserString& s);

} // namespace tpkit
