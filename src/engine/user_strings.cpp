// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "engine/user_strings.hpp"

#include "tpkit/kernel/syscalls.hpp"
#include "tpkit/support/json.hpp"

#include <bit>
#include <cstring>

namespace tpkit {

namespace {

bool is_char_pointer(const Field& f)
{
    std::string type;
    for (char c : f.type)
        if (c != ' ')
            type += c;
    return f.kind == FieldKind::scalar && f.size == 8 && (type == "constchar*" || type == "char*");
}

// Field F's place among the strings of FORMAT's records: a syscall's argument index, or which
// kernel string it is; 32 when it has none.
std::uint32_t string_index(const EventFormat& format, const Field& f)
{
    if (format.system == "syscalls")
        return is_syscall_user_string(format, f) ? syscall_argument_index(f) : 32;
    std::uint32_t index = 0;
    for (const Field& g : format.fields) {
        if (g.common || !is_char_pointer(g))
            continue;
        if (&g == &f || g.offset == f.offset)
            return index < TPKIT_SNOOP_MAX_KERNEL_STRINGS ? index : 32;
        index++;
    }
    return 32;
}

} // namespace

bool is_kernel_string(const EventFormat& format, const Field& f)
{
    return format.system != "syscalls" && !f.common && is_char_pointer(f) &&
           string_index(format, f) < TPKIT_SNOOP_MAX_KERNEL_STRINGS;
}

std::uint8_t kernel_string_offsets(const EventFormat& format,
                                   std::uint32_t (&offsets)[TPKIT_SNOOP_MAX_KERNEL_STRINGS])
{
    std::uint8_t n = 0;
    for (const Field& f : format.fields)
        if (n < TPKIT_SNOOP_MAX_KERNEL_STRINGS && is_kernel_string(format, f))
            offsets[n++] = f.offset;
    return n;
}

UserStrings UserStrings::parse(std::uint32_t mask, std::uint32_t record_size,
                               std::span<const std::byte> bytes)
{
    mask &= 0x3f;
    std::size_t size = std::size_t(std::popcount(mask)) * sizeof(tpkit_user_str);
    std::size_t start = tpkit_strings_offset(record_size);
    if (!mask || bytes.size() < start + size)
        return {};
    return {mask, bytes.subspan(start, size)};
}

std::optional<UserString> UserStrings::find(const EventFormat& format, const Field& f) const
{
    if (!mask)
        return std::nullopt;
    std::uint32_t index = string_index(format, f);
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
