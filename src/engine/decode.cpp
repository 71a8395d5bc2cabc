// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "engine/decode.hpp"

#include "tpkit/support/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>

namespace tpkit {
namespace {

std::uint64_t read_integer(std::span<const std::byte> bytes, bool is_signed)
{
    if (bytes.empty())
        return 0;
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data(), std::min<std::size_t>(bytes.size(), 8));
    if (is_signed && bytes.size() < 8) {
        unsigned shift = 64 - 8 * static_cast<unsigned>(bytes.size());
        v = static_cast<std::uint64_t>(static_cast<std::int64_t>(v << shift) >> shift);
    }
    return v;
}

// Element size of a __data_loc array from its element type's name; 0 when unknown.
std::uint32_t named_type_size(const std::string& type)
{
    if (type.find('*') != std::string::npos)
        return 8;
    static const std::pair<const char*, std::uint32_t> sizes[] = {
        {"char", 1}, {"unsigned char", 1}, {"signed char", 1}, {"u8", 1}, {"s8", 1}, {"__u8", 1},
        {"__s8", 1}, {"bool", 1}, {"short", 2}, {"unsigned short", 2}, {"u16", 2}, {"s16", 2},
        {"__u16", 2}, {"__s16", 2}, {"int", 4}, {"unsigned int", 4}, {"u32", 4}, {"s32", 4},
        {"__u32", 4}, {"__s32", 4}, {"pid_t", 4}, {"long", 8}, {"unsigned long", 8}, {"u64", 8},
        {"s64", 8}, {"__u64", 8}, {"__s64", 8}, {"long long", 8}, {"unsigned long long", 8}};
    for (const auto& [name, size] : sizes)
        if (type == name)
            return size;
    return 0;
}

bool is_integer_size(std::uint32_t size) { return size == 1 || size == 2 || size == 4 || size == 8; }

DecodedValue integer(std::span<const std::byte> bytes, bool is_signed, bool pointer)
{
    DecodedValue v;
    v.kind = pointer ? DecodedValue::Kind::pointer : DecodedValue::Kind::integer;
    v.is_signed = is_signed && !pointer;
    v.number = read_integer(bytes, v.is_signed);
    return v;
}

DecodedValue raw_bytes(std::span<const std::byte> bytes)
{
    DecodedValue v;
    v.kind = DecodedValue::Kind::bytes;
    v.text = std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return v;
}

DecodedValue string_value(std::span<const std::byte> bytes)
{
    DecodedValue v;
    v.kind = DecodedValue::Kind::string;
    const char* p = reinterpret_cast<const char*>(bytes.data());
    v.text = std::string_view(p, strnlen(p, bytes.size()));
    return v;
}

DecodedValue array_value(std::span<const std::byte> bytes, std::uint32_t elem_size, bool is_signed,
                         bool pointer)
{
    if (!is_integer_size(elem_size) || bytes.size() % elem_size != 0)
        return raw_bytes(bytes);
    DecodedValue v;
    v.kind = DecodedValue::Kind::array;
    for (std::size_t at = 0; at < bytes.size(); at += elem_size)
        v.elements.push_back(integer(bytes.subspan(at, elem_size), is_signed, pointer));
    return v;
}

constexpr char hex_digits[] = "0123456789abcdef";

void append_hex_bytes(std::string& out, std::string_view raw)
{
    for (unsigned char c : raw) {
        const char pair[2] = {hex_digits[c >> 4], hex_digits[c & 0xF]};
        out.append(pair, 2);
    }
}

void append_uint(std::string& out, std::uint64_t v, int base = 10)
{
    char buf[24];
    auto end = std::to_chars(buf, buf + sizeof(buf), v, base).ptr;
    out.append(buf, end);
}

void append_int(std::string& out, std::int64_t v)
{
    char buf[24];
    auto end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
    out.append(buf, end);
}

// Strings as trace_pipe shows them, but with control bytes escaped so a line stays a line.
void append_printable(std::string& out, std::string_view s)
{
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t run = i;
        while (run < s.size() && static_cast<unsigned char>(s[run]) >= 0x20 && s[run] != 0x7f)
            ++run;
        out.append(s.data() + i, run - i);
        if (run == s.size())
            break;
        auto c = static_cast<unsigned char>(s[run]);
        const char esc[4] = {'\\', 'x', hex_digits[c >> 4], hex_digits[c & 0xF]};
        out.append(esc, 4);
        i = run + 1;
    }
}

// A JSON member's key: `"name":`.
void append_json_key(std::string& out, std::string_view key)
{
    append_json_string(out, key);
    out += ':';
}

} // namespace

void DecodedValue::append_str(std::string& out) const
{
    switch (kind) {
    case Kind::integer:
        if (is_signed)
            append_int(out, static_cast<std::int64_t>(number));
        else
            append_uint(out, number);
        return;
    case Kind::pointer:
        out.append("0x", 2);
        append_uint(out, number, 16);
        return;
    case Kind::string:
        append_printable(out, text);
        return;
    case Kind::array:
        out += '[';
        for (std::size_t i = 0; i < elements.size(); i++) {
            if (i)
                out += ',';
            elements[i].append_str(out);
        }
        out += ']';
        return;
    case Kind::bytes:
        append_hex_bytes(out, text);
        return;
    case Kind::missing:
        break;
    }
    out += '?';
}

std::string DecodedValue::str() const
{
    std::string out;
    append_str(out);
    return out;
}

void DecodedValue::append_json(std::string& out) const
{
    switch (kind) {
    case Kind::integer:
        append_str(out);
        return;
    case Kind::pointer:
    case Kind::bytes:
        // Hex digits only: a JSON string as they are.
        out += '"';
        append_str(out);
        out += '"';
        return;
    case Kind::string:
        append_json_string(out, text);
        return;
    case Kind::array:
        out += '[';
        for (std::size_t i = 0; i < elements.size(); i++) {
            if (i)
                out += ',';
            elements[i].append_json(out);
        }
        out += ']';
        return;
    case Kind::missing:
        break;
    }
    out.append("null", 4);
}

std::string DecodedValue::json() const
{
    std::string out;
    append_json(out);
    return out;
}

DecodedValue decode_field(const Field& f, std::span<const std::byte> record)
{
    // 64-bit sums: with 32-bit ones a crafted offset near 4 GiB wraps past these checks.
    if (std::uint64_t(f.offset) + f.size > record.size())
        return {};
    auto bytes = record.subspan(f.offset, f.size);
    bool pointer_elems = f.elem_type.find('*') != std::string::npos;
    switch (f.kind) {
    case FieldKind::scalar:
        if (is_integer_size(f.size))
            return integer(bytes, f.is_signed, f.is_pointer());
        return raw_bytes(bytes);
    case FieldKind::array:
        if (f.is_string())
            return string_value(bytes);
        return array_value(bytes, f.array_len ? f.size / f.array_len : 0, f.is_signed, pointer_elems);
    case FieldKind::data_loc:
    case FieldKind::rel_loc: {
        if (f.size < 4)
            return {};
        auto loc = static_cast<std::uint32_t>(read_integer(bytes.first(4), false));
        std::uint64_t start = loc & 0xffff, len = loc >> 16;
        if (f.kind == FieldKind::rel_loc)
            start += std::uint64_t(f.offset) + f.size;
        if (start + len > record.size())
            return {};
        auto data = record.subspan(start, len);
        if (f.is_string())
            return string_value(data);
        return array_value(data, named_type_size(f.elem_type), f.is_signed, pointer_elems);
    }
    }
    return {};
}

std::vector<const Field*> fields_to_print(const EventFormat& format,
                                          const std::vector<std::string>& selected)
{
    std::vector<const Field*> fields;
    if (selected.empty()) {
        for (const Field& f : format.fields)
            if (!f.common)
                fields.push_back(&f);
        return fields;
    }
    for (const std::string& name : selected)
        if (const Field* f = format.field(name))
            fields.push_back(f);
    return fields;
}

bool SnoopEvent::parse(std::span<const std::byte> data, SnoopEvent& out)
{
    if (data.size() < sizeof(tpsnoop_header))
        return false;
    std::memcpy(&out.header, data.data(), sizeof(tpsnoop_header));
    if (data.size() - sizeof(tpsnoop_header) < out.header.record_size)
        return false;
    out.record = data.subspan(sizeof(tpsnoop_header), out.header.record_size);
    out.strings = UserStrings::parse(out.header.user_strings, out.header.record_size,
                                     data.subspan(sizeof(tpsnoop_header)));
    return true;
}

std::uint32_t SnoopEvent::event_id() const
{
    std::uint16_t type = 0; // common_type: unsigned short at offset 0 on every kernel
    std::memcpy(&type, record.data(), std::min<std::size_t>(record.size(), sizeof(type)));
    return type;
}

void append_snoop_head(std::string& out, const SnoopEvent& event, std::string_view time)
{
    const tpsnoop_header& h = event.header;
    // The comm escaped, then right-aligned in 16 columns like trace_pipe. fmt counts the
    // columns of UTF-8 text; ASCII, the common case, is one byte a column.
    std::string_view comm(h.comm, strnlen(h.comm, sizeof(h.comm)));
    if (std::any_of(comm.begin(), comm.end(), [](char c) { return c & 0x80; })) {
        std::string escaped;
        append_printable(escaped, comm);
        fmt::format_to(std::back_inserter(out), "{:>16}", escaped);
    } else {
        std::size_t comm_at = out.size();
        append_printable(out, comm);
        if (std::size_t comm_len = out.size() - comm_at; comm_len < 16)
            out.insert(comm_at, 16 - comm_len, ' ');
    }
    out += '-';
    std::size_t tid_at = out.size();
    append_uint(out, h.tid);
    if (std::size_t tid_len = out.size() - tid_at; tid_len < 7)
        out.append(7 - tid_len, ' ');
    out.append(" [", 2);
    char cpu[16];
    auto cpu_end = fmt::format_to_n(cpu, sizeof(cpu), "{:03}", h.cpu).out;
    out.append(cpu, cpu_end);
    out.append("] ", 2);
    out.append(time);
    out.append(": ", 2);
}

void append_snoop_fields(std::string& out, const SnoopEvent& event, const EventFormat& format,
                         const std::vector<const Field*>& fields)
{
    out.append(format.name);
    out += ':';
    for (const Field* f : fields) {
        out += ' ';
        out.append(f->name);
        out += '=';
        if (auto s = event.strings.find(format, *f); s && !s->fault)
            append_user_string(out, *s);
        else
            decode_field(*f, event.record).append_str(out);
    }
}

void append_snoop_text(std::string& out, const SnoopEvent& event, const EventFormat& format,
                       const std::vector<const Field*>& fields, std::string_view time)
{
    append_snoop_head(out, event, time);
    append_snoop_fields(out, event, format, fields);
}

void append_snoop_json(std::string& out, const SnoopEvent& event, const EventFormat& format,
                       const std::vector<const Field*>& fields, std::string_view time_key,
                       std::int64_t time_value, KernelText* kernel_text)
{
    const tpsnoop_header& h = event.header;
    out.append("{\"type\":\"event\",", 16);
    append_json_key(out, time_key);
    append_int(out, time_value);
    // "system:event" escaped in two parts: ':' cannot end or continue a UTF-8 sequence.
    out.append(",\"event\":", 9);
    append_json_string(out, format.system);
    out.back() = ':';
    std::size_t name_at = out.size();
    append_json_string(out, format.name);
    out.erase(name_at, 1); // the name's opening quote
    out.append(",\"comm\":", 8);
    append_json_string(out, std::string_view(h.comm, strnlen(h.comm, sizeof(h.comm))));
    out.append(",\"pid\":", 7);
    append_uint(out, h.pid);
    out.append(",\"tid\":", 7);
    append_uint(out, h.tid);
    out.append(",\"cpu\":", 7);
    append_uint(out, h.cpu);
    // Nested: events have fields named comm, pid or cpu too.
    out.append(",\"fields\":{", 11);
    for (std::size_t i = 0; i < fields.size(); i++) {
        if (i)
            out += ',';
        append_json_key(out, fields[i]->name);
        decode_field(*fields[i], event.record).append_json(out);
        if (auto s = event.strings.find(format, *fields[i]))
            append_user_string_json(out, fields[i]->name, *s);
        if (kernel_text)
            kernel_text->append_json_extras(out, format, *fields[i], event.record);
    }
    out.append("}}", 2);
}

} // namespace tpkit
