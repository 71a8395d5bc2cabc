#include "tpkit/decode.hpp"

#include "tpkit/json.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace tpkit {
namespace {

std::uint64_t read_integer(std::span<const std::byte> bytes, bool is_signed)
{
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
    v.text.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return v;
}

DecodedValue string_value(std::span<const std::byte> bytes)
{
    DecodedValue v;
    v.kind = DecodedValue::Kind::string;
    const char* p = reinterpret_cast<const char*>(bytes.data());
    v.text.assign(p, strnlen(p, bytes.size()));
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

std::string hex_bytes(const std::string& raw)
{
    std::string out;
    for (unsigned char c : raw)
        out += fmt::format("{:02x}", c);
    return out;
}

// Strings as trace_pipe shows them, but with control bytes escaped so a line stays a line.
std::string printable(const std::string& s)
{
    std::string out;
    for (unsigned char c : s) {
        if (c < 0x20 || c == 0x7f)
            out += fmt::format("\\x{:02x}", c);
        else
            out += static_cast<char>(c);
    }
    return out;
}

} // namespace

std::string DecodedValue::str() const
{
    switch (kind) {
    case Kind::integer:
        return is_signed ? std::to_string(static_cast<std::int64_t>(number)) : std::to_string(number);
    case Kind::pointer:
        return fmt::format("0x{:x}", number);
    case Kind::string:
        return printable(text);
    case Kind::array: {
        std::string out = "[";
        for (const auto& e : elements)
            out += (out.size() > 1 ? "," : "") + e.str();
        return out + "]";
    }
    case Kind::bytes:
        return hex_bytes(text);
    case Kind::missing:
        break;
    }
    return "?";
}

std::string DecodedValue::json() const
{
    std::string out;
    switch (kind) {
    case Kind::integer:
        return str();
    case Kind::pointer:
    case Kind::bytes:
        append_json_string(out, str());
        return out;
    case Kind::string:
        append_json_string(out, text);
        return out;
    case Kind::array:
        out = "[";
        for (const auto& e : elements)
            out += (out.size() > 1 ? "," : "") + e.json();
        return out + "]";
    case Kind::missing:
        break;
    }
    return "null";
}

DecodedValue decode_field(const Field& f, std::span<const std::byte> record)
{
    if (f.offset + f.size > record.size())
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
        auto loc = static_cast<std::uint32_t>(read_integer(bytes, false));
        std::size_t start = loc & 0xffff, len = loc >> 16;
        if (f.kind == FieldKind::rel_loc)
            start += f.offset + f.size;
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
    return true;
}

std::uint32_t SnoopEvent::event_id() const
{
    std::uint16_t type = 0; // common_type: unsigned short at offset 0 on every kernel
    std::memcpy(&type, record.data(), std::min<std::size_t>(record.size(), sizeof(type)));
    return type;
}

std::string snoop_text(const SnoopEvent& event, const EventFormat& format,
                       const std::vector<const Field*>& fields, const std::string& time)
{
    const tpsnoop_header& h = event.header;
    std::string comm(h.comm, strnlen(h.comm, sizeof(h.comm)));
    std::string line = fmt::format("{:>16}-{:<7} [{:03}] {}: {}:", printable(comm), h.tid, h.cpu,
                                   time, format.name);
    for (const Field* f : fields)
        line += fmt::format(" {}={}", f->name, decode_field(*f, event.record).str());
    return line;
}

std::string snoop_json(const SnoopEvent& event, const EventFormat& format,
                       const std::vector<const Field*>& fields, std::string_view time_key,
                       std::int64_t time_value)
{
    const tpsnoop_header& h = event.header;
    JsonObject obj;
    std::string name;
    name.reserve(format.system.size() + 1 + format.name.size());
    name.append(format.system).append(":").append(format.name);
    obj.add(time_key, time_value)
        .add("event", name)
        .add("comm", std::string_view(h.comm, strnlen(h.comm, sizeof(h.comm))))
        .add("pid", h.pid)
        .add("tid", h.tid)
        .add("cpu", h.cpu);
    // Nested: events have fields named comm, pid or cpu too.
    JsonObject values;
    for (const Field* f : fields)
        values.add_raw(f->name, decode_field(*f, event.record).json());
    return obj.add_raw("fields", values.str()).str();
}

} // namespace tpkit
