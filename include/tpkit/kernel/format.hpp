// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The tracefs `format` file of an event: its fields and print format.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tpkit {

enum class FieldKind {
    scalar,   // integer, pointer or other fixed-size value
    array,    // fixed-size array: `char comm[16]`, `u8 addr[4]`
    data_loc, // __data_loc T[]: u32 = (length << 16) | offset from the record start
    rel_loc,  // __rel_loc T[]: like data_loc, offset from the end of this field
};

struct Field {
    std::string type;      // C type text as written, without the name: "unsigned int", "char[16]"
    std::string elem_type; // base type: "char" for "char comm[16]" and "__data_loc char[]"
    std::string name;
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
    bool is_signed = false;
    std::uint32_t array_len = 0; // elements of a fixed array, 0 otherwise
    FieldKind kind = FieldKind::scalar;
    bool common = false;         // one of the common_* header fields

    bool is_string() const; // char arrays and __data_loc/__rel_loc char[]
    bool is_pointer() const;
    bool is_dynamic() const { return kind == FieldKind::data_loc || kind == FieldKind::rel_loc; }
};

struct EventFormat {
    std::string system; // may be empty when parsed from text without a path
    std::string name;
    std::uint32_t id = 0;
    std::vector<Field> fields; // common fields first, in file order
    std::string print_fmt;

    const Field* field(std::string_view field_name) const;
    // Bytes of the fixed part of the record: the end of the last field.
    std::uint32_t fixed_size() const;
};

// A malformed format file; what() is "FILE:LINE: message".
class FormatError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Parses the text of a format file; source names it in errors.
EventFormat parse_format(std::string_view text, std::string_view source);

// Reads and parses a format file; the system is taken from the parent of the event directory.
EventFormat read_format(const std::filesystem::path& file);

// "system:event", or the name alone for a format read without its system.
std::string event_label(const EventFormat& format);

} // namespace tpkit
