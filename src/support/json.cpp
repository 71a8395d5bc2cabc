// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/support/json.hpp"

#include <fmt/core.h>

#include <array>
#include <cmath>

namespace tpkit {

std::size_t utf8_sequence(std::string_view s, std::size_t i)
{
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = byte(i);
    std::size_t n = 0;
    unsigned char second_lo = 0x80, second_hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        second_lo = c == 0xE0 ? 0xA0 : 0x80;
        second_hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        second_lo = c == 0xF0 ? 0x90 : 0x80;
        second_hi = c == 0xF4 ? 0x8F : 0xBF;
    }
    if (n == 0 || i + n > s.size())
        return 0;
    if (byte(i + 1) < second_lo || byte(i + 1) > second_hi)
        return 0;
    for (std::size_t k = 2; k < n; k++)
        if ((byte(i + k) & 0xC0) != 0x80)
            return 0;
    return n;
}

std::string json_string_array(const std::vector<std::string>& strings)
{
    std::string out = "[";
    for (const auto& s : strings) {
        if (out.size() > 1)
            out += ',';
        append_json_string(out, s);
    }
    return out + "]";
}

void append_json_string(std::string& out, std::string_view s)
{
    // Bytes that end a plain run: controls, DEL, '"', '\\' and everything from 0x80 (UTF-8 checks).
    static constexpr auto special = [] {
        std::array<bool, 256> t{};
        for (unsigned c = 0; c < 256; c++)
            t[c] = c < 0x20 || c >= 0x7F || c == '"' || c == '\\';
        return t;
    }();
    static constexpr char hex[] = "0123456789abcdef";
    auto escape_u00 = [&](unsigned char c) {
        const char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
        out.append(u, sizeof(u));
    };
    out += '"';
    const std::size_t size = s.size();
    for (std::size_t i = 0; i < size;) {
        // Plain printable ASCII, the common case, goes in whole runs.
        std::size_t run = i;
        while (run < size && !special[static_cast<unsigned char>(s[run])])
            ++run;
        if (run > i) {
            out.append(s.data() + i, run - i);
            i = run;
            if (i == size)
                break;
        }
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            const char e[2] = {'\\', static_cast<char>(c)};
            out.append(e, 2);
        } else if (c == '\n') {
            out.append("\\n", 2);
        } else if (c == '\t') {
            out.append("\\t", 2);
        } else if (c < 0x80) {
            escape_u00(c); // the other controls and DEL
        } else {
            std::size_t n = utf8_sequence(s, i);
            if (n == 0) {
                escape_u00(c); // a stray byte, shown as its Latin-1 code
            } else {
                out.append(s.data() + i, n);
                i += n;
                continue;
            }
        }
        ++i;
    }
    out += '"';
}

void JsonObject::key(std::string_view k)
{
    if (body_.size() > 1)
        body_ += ',';
    append_json_string(body_, k);
    body_ += ':';
}

JsonObject& JsonObject::add(std::string_view k, std::string_view value)
{
    key(k);
    append_json_string(body_, value);
    return *this;
}

JsonObject& JsonObject::add(std::string_view k, bool value)
{
    key(k);
    body_ += value ? "true" : "false";
    return *this;
}

JsonObject& JsonObject::add(std::string_view k, double value)
{
    key(k);
    body_ += std::isfinite(value) ? fmt::format("{}", value) : "null";
    return *this;
}

JsonObject& JsonObject::add_raw(std::string_view k, std::string_view json)
{
    key(k);
    body_ += json;
    return *this;
}

} // namespace tpkit
