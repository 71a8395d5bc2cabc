// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/user_strings.hpp"

#include "tpkit/json.hpp"
#include "tpkit/syscalls.hpp"

#include <bit>
#include <cstring>

namespace tpkit {

UserStrings UserStrings::parse(std::uint32_t mask, std::span<const std::byte> bytes)
{
    mask &= 0x3f;
    std::size_t size = std::size_t(std::popcount(mask)) * sizeof(tpkit_user_str);
    constexpr std::size_t start = sizeof(tpkit_syscall_record);
    if (!mask || bytes.size() < start + size)
        return {};
    return {mask, bytes.subspan(start, size)};
}

std::optional<UserString> UserStrings::find(const Field& f) const
{
    std::uint32_t index = syscall_argument_index(f);
    if (index >= 6 || !(mask >> index & 1))
        return std::nullopt;
    std::size_t slot = std::popcount(mask & ((1u << index) - 1));
    if ((slot + 1) * sizeof(tpkit_user_str) > slots.size())
        return std::nullopt;
    const std::byte* at = slots.data() + slot * sizeof(tpkit_user_str);
    std::int32_t len = 0;
    std::uint32_t flags = 0;
    std::memcpy(&len, at + offsetof(tpkit_user_str, len), sizeof(len));
    std::memcpy(&flags, at + offsetof(tpkit_user_str, flags), sizeof(flags));
    UserString s;
    if (len <= 0) {
        s.fault = true;
        return s;
    }
    const char* text = reinterpret_cast<const char*>(at + offsetof(tpkit_user_str, text));
    s.text = std::string_view(text, strnlen(text, TPKIT_USER_STR_MAX));
    s.cut = flags & TPKIT_USER_STR_CUT;
    return s;
}

void append_user_string(std::string& out, const UserString& s)
{
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    for (char c : s.text) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u == 0x7f) {
            const char esc[4] = {'\\', 'x', hex[u >> 4], hex[u & 0xf]};
            out.append(esc, 4);
        } else {
            out += c;
        }
    }
    out += '"';
    if (s.cut)
        out += "...";
}

void append_user_string_json(std::string& out, std::string_view name, const UserString& s)
{
    if (s.fault)
        return;
    out += ',';
    append_json_string(out, std::string(name) + "_sym");
    out += ':';
    append_json_string(out, s.text);
    if (s.cut) {
        out += ',';
        append_json_string(out, std::string(name) + "_cut");
        out += ":true";
    }
}

} // namespace tpkit
