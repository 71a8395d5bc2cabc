#include "tpkit/json.hpp"

#include <fmt/core.h>

#include <cmath>

namespace tpkit {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (Unicode table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when it is not one.
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

} // namespace

void append_json_string(std::string& out, std::string_view s)
{
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        // Plain printable ASCII, the common case, goes in whole runs.
        std::size_t run = i;
        while (run < s.size() && static_cast<unsigned char>(s[run]) >= 0x20 &&
               static_cast<unsigned char>(s[run]) < 0x7F && s[run] != '"' && s[run] != '\\')
            ++run;
        if (run > i) {
            out.append(s.substr(i, run - i));
            i = run;
            continue;
        }
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7F) {
            out += fmt::format("\\u{:04x}", c);
        } else if (c >= 0x80) {
            std::size_t n = utf8_sequence(s, i);
            if (n == 0) {
                out += fmt::format("\\u{:04x}", c); // a stray byte, shown as its Latin-1 code
            } else {
                out.append(s.substr(i, n));
                i += n;
                continue;
            }
        } else {
            out += static_cast<char>(c);
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
