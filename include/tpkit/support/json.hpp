// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A small writer for one-JSON-object-per-line output (--json in every tool).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tpkit {

// Length of the well-formed UTF-8 sequence at s[i] (Unicode table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when it is not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i);

// Appends s to out as a JSON string literal (quotes included): control characters, quotes,
// backslashes and bytes that are not valid UTF-8 are escaped.
void append_json_string(std::string& out, std::string_view s);

// Strings as a JSON array: ["a","b"] (a stack's frames).
std::string json_string_array(const std::vector<std::string>& strings);

// Builds one JSON object: JsonObject().add("pid", 1).add("comm", "sh").str() → {"pid":1,"comm":"sh"}
class JsonObject {
public:
    // Room for a typical event line up front: one allocation per object, not one per member.
    JsonObject() { body_.reserve(256); }

    JsonObject& add(std::string_view key, std::string_view value);
    JsonObject& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
    JsonObject& add(std::string_view key, bool value);
    JsonObject& add(std::string_view key, double value);
    template <class Int>
        requires(std::is_integral_v<Int> && !std::is_same_v<Int, bool>)
    JsonObject& add(std::string_view key, Int value)
    {
        return add_raw(key, std::to_string(value));
    }
    // value must already be valid JSON (a nested object or array).
    JsonObject& add_raw(std::string_view key, std::string_view json);

    std::string str() const { return body_ + "}"; }

private:
    void key(std::string_view k);
    std::string body_ = "{";
};

} // namespace tpkit
