#include "tpkit/json.hpp"

#include <fmt/core.h>

#include <cmath>

namespace tpkit {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i)
{
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = byte(i);
    std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (c >= 0xF5 || n == 0 || i + n > s.size())
        return 0;
    for (std::size_t k = 1; k < n; k++)
        if ((byte(i + k) & 0xC0) != 0x80)
            return 0;
    return n;
}

} // namespace

void append_json_string(std::string& out, std::string_view s)
{
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
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
