// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The strings a syscall's `const char *` arguments point to, which tpsnoop reads in BPF from the
// caller's memory and sends after the event's record (tpsnoop_header.user_strings), and how they
// are shown: as strace shows them, "/etc/passwd" in quotes, "..." after a string cut at
// TPKIT_USER_STR_MAX - 1 bytes; an unreadable pointer as the address the kernel prints.
#pragma once

#include "tpkit/engine.h"
#include "tpkit/format.hpp"

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
    std::uint32_t mask = 0;           // bit i: args[i]'s string is in slots
    std::span<const std::byte> slots; // one struct tpkit_user_str per bit of mask, in bit order

    // The strings of a transport record whose header says MASK, from its bytes after the header;
    // none when they do not fit in BYTES.
    static UserStrings parse(std::uint32_t mask, std::span<const std::byte> bytes);
    // The string of argument field F of a syscalls:sys_enter_* record; nullopt when not read.
    std::optional<UserString> find(const Field& f) const;
};

// "text" with ", \ and control bytes escaped (\", \\, \x0a), then ... when it was cut.
void append_user_string(std::string& out, const UserString& s);
// The JSON members after field NAME's raw value (the pointer): ,"NAME_sym":"text" and
// ,"NAME_cut":true when it was cut; nothing for a pointer that could not be read.
void append_user_string_json(std::string& out, std::string_view name, const UserString& s);

} // namespace tpkit
