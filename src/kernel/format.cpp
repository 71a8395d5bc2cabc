// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/kernel/format.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <sstream>

namespace tpkit {
namespace {

// The fixed part of a record ends within 64 KiB: __data_loc offsets are 16 bits, and records
// live in ring-buffer pages of a few KiB.
constexpr std::uint64_t max_record_size = 1 << 16;

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

bool consume_prefix(std::string_view& s, std::string_view prefix)
{
    if (s.substr(0, prefix.size()) != prefix)
        return false;
    s.remove_prefix(prefix.size());
    return true;
}

class LineParser {
public:
    LineParser(std::string_view source, std::size_t line) : source_(source), line_(line) {}

    [[noreturn]] void fail(const std::string& message) const
    {
        throw FormatError(std::string(source_) + ":" + std::to_string(line_) + ": " + message);
    }

    std::uint32_t number(std::string_view text, std::string_view what) const
    {
        text = trim(text);
        std::uint32_t value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size())
            fail("bad " + std::string(what) + " '" + std::string(text) + "'");
        return value;
    }

    // "\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;"
    Field field(std::string_view line) const
    {
        std::string_view rest = trim(line);
        consume_prefix(rest, "field:");
        Field f;
        std::string_view decl = next_item(rest, "field declaration");
        f.offset = number(attribute(rest, "offset"), "offset");
        f.size = number(attribute(rest, "size"), "size");
        f.is_signed = number(attribute(rest, "signed"), "signed") != 0;
        declaration(trim(decl), f);
        // In 64 bits: offset + size in 32 would wrap and pass every later bounds check.
        std::uint64_t end = std::uint64_t(f.offset) + f.size;
        if (end > max_record_size)
            fail("field '" + f.name + "' at offset " + std::to_string(f.offset) + " size " +
                 std::to_string(f.size) + " ends past " + std::to_string(max_record_size) +
                 " bytes, beyond any trace record");
        f.common = f.name.rfind("common_", 0) == 0;
        return f;
    }

private:
    std::string_view next_item(std::string_view& rest, std::string_view what) const
    {
        auto semi = rest.find(';');
        if (semi == std::string_view::npos)
            fail("missing ';' after " + std::string(what));
        std::string_view item = rest.substr(0, semi);
        rest.remove_prefix(semi + 1);
        rest = trim(rest);
        return item;
    }

    std::string_view attribute(std::string_view& rest, std::string_view key) const
    {
        std::string_view item = trim(next_item(rest, key));
        if (!consume_prefix(item, key) || !consume_prefix(item, ":"))
            fail("expected '" + std::string(key) + ":'");
        return item;
    }

    // Splits "unsigned long addr[4]", "__data_loc char[] name", "const char * name".
    void declaration(std::string_view decl, Field& f) const
    {
        if (decl.empty())
            fail("empty field declaration");
        std::string_view type_part;
        std::string_view name_part;
        std::string_view suffix; // "[N]" after the name
        if (decl.back() == ']') {
            auto open = decl.rfind('[');
            if (open == std::string_view::npos)
                fail("unbalanced '[' in '" + std::string(decl) + "'");
            suffix = decl.substr(open);
            decl = trim(decl.substr(0, open));
        }
        auto split = decl.find_last_of(" \t*");
        if (split == std::string_view::npos)
            fail("no field name in '" + std::string(decl) + "'");
        name_part = decl.substr(split + 1);
        type_part = trim(decl.substr(0, split + 1));
        if (name_part.empty() || type_part.empty())
            fail("no field name in '" + std::string(decl) + "'");
        f.name = std::string(name_part);

        bool dynamic = false;
        if (consume_prefix(type_part, "__data_loc ")) {
            f.kind = FieldKind::data_loc;
            dynamic = true;
        } else if (consume_prefix(type_part, "__rel_loc ")) {
            f.kind = FieldKind::rel_loc;
            dynamic = true;
        }
        type_part = trim(type_part);
        if (dynamic) {
            // "__data_loc char[] name": the [] belongs to the type; some kernels print it after
            // the name instead.
            if (type_part.size() >= 2 && type_part.substr(type_part.size() - 2) == "[]")
                type_part = trim(type_part.substr(0, type_part.size() - 2));
            if (f.size != 4)
                fail("dynamic field '" + f.name + "' has size " + std::to_string(f.size) +
                     ", expected 4");
            f.elem_type = std::string(type_part);
            f.type = (f.kind == FieldKind::data_loc ? "__data_loc " : "__rel_loc ") +
                     f.elem_type + "[]";
            return;
        }
        f.elem_type = std::string(type_part);
        f.type = f.elem_type;
        if (!suffix.empty()) {
            std::string_view len = suffix.substr(1, suffix.size() - 2);
            f.kind = FieldKind::array;
            if (trim(len).empty()) {
                f.array_len = 0; // flexible array at the end of the record
            } else {
                std::uint32_t n = 0;
                auto t = trim(len);
                auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
                // Some kernels print symbolic lengths (e.g. "[TASK_COMM_LEN]"): derive it.
                if (ec != std::errc() || end != t.data() + t.size()) {
                    std::uint32_t elem = element_size(f);
                    n = elem ? f.size / elem : 0;
                }
                f.array_len = n;
            }
            f.type += std::string(suffix);
        }
    }

    // Element size of an array field from its total size and declared length, or from the
    // base type's name when the length is symbolic.
    static std::uint32_t element_size(const Field& f)
    {
        const std::string& t = f.elem_type;
        if (t.find('*') != std::string::npos)
            return 8;
        if (t == "char" || t == "unsigned char" || t == "signed char" || t == "u8" ||
            t == "s8" || t == "__u8" || t == "__s8" || t == "bool")
            return 1;
        return 0;
    }

    std::string_view source_;
    std::size_t line_;
};

} // namespace

bool Field::is_string() const
{
    bool char_elem = elem_type == "char" || elem_type == "const char" ||
                     elem_type == "unsigned char" || elem_type == "signed char";
    return char_elem && (kind == FieldKind::array || is_dynamic());
}

bool Field::is_pointer() const
{
    return kind == FieldKind::scalar && type.find('*') != std::string::npos;
}

const Field* EventFormat::field(std::string_view field_name) const
{
    for (const Field& f : fields)
        if (f.name == field_name)
            return &f;
    return nullptr;
}

std::uint32_t EventFormat::fixed_size() const
{
    std::uint64_t end = 0; // 64 bits: formats built by hand are not bounded by the parser
    for (const Field& f : fields)
        end = std::max(end, std::uint64_t(f.offset) + f.size);
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(end, UINT32_MAX));
}

EventFormat parse_format(std::string_view text, std::string_view source)
{
    EventFormat format;
    bool have_name = false, have_id = false, in_fields = false, have_print = false;
    std::size_t line_no = 0;
    while (!text.empty()) {
        auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        ++line_no;
        LineParser parser(source, line_no);
        std::string_view t = trim(line);
        if (t.empty())
            continue;
        if (consume_prefix(t, "name:")) {
            format.name = std::string(trim(t));
            have_name = !format.name.empty();
            if (!have_name)
                parser.fail("empty event name");
        } else if (consume_prefix(t, "ID:")) {
            format.id = parser.number(t, "ID");
            have_id = true;
        } else if (t == "format:") {
            in_fields = true;
        } else if (t.substr(0, 6) == "field:") {
            if (!in_fields)
                parser.fail("field before 'format:'");
            Field f = parser.field(t);
            if (format.field(f.name))
                parser.fail("duplicate field '" + f.name + "'");
            format.fields.push_back(std::move(f));
        } else if (consume_prefix(t, "print fmt:")) {
            // The print format is the rest of the file: its strings may hold newlines.
            std::string rest(t);
            rest += '\n';
            rest += text;
            format.print_fmt = std::string(trim(rest));
            while (!format.print_fmt.empty() && format.print_fmt.back() == '\n')
                format.print_fmt.pop_back();
            have_print = true;
            break;
        } else {
            parser.fail("unexpected line '" + std::string(t.substr(0, 60)) + "'");
        }
    }
    LineParser end(source, line_no);
    if (!have_name)
        end.fail("no 'name:' line");
    if (!have_id)
        end.fail("no 'ID:' line");
    if (format.fields.empty())
        end.fail("no fields");
    if (!have_print)
        end.fail("no 'print fmt:' line");
    return format;
}

EventFormat read_format(const std::filesystem::path& file)
{
    std::ifstream in(file);
    if (!in)
        throw FormatError(file.string() + ":0: cannot read");
    std::ostringstream text;
    text << in.rdbuf();
    EventFormat format = parse_format(text.str(), file.string());
    format.system = file.parent_path().parent_path().filename().string();
    return format;
}

std::string event_label(const EventFormat& format)
{
    return format.system.empty() ? format.name : format.system + ":" + format.name;
}

} // namespace tpkit
