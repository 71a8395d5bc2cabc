// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpgen: record structs and field getters for tracepoint contexts, from format files + BTF.
#include "tpgen/tpgen.hpp"

#include "tpkit/support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace tpkit::tpgen {
namespace {

constexpr std::string_view raw_prefix = "trace_event_raw_";

[[noreturn]] void fail(const TracepointName& event, std::string_view field, const std::string& why)
{
    if (field.empty())
        throw Error(Exit::failure, fmt::format("{}: {}", event.str(), why));
    throw Error(Exit::failure, fmt::format("{} field '{}': {}", event.str(), field, why));
}

// A field whose name C cannot take: bad input, refused like a bad value rather than renamed, so
// that a header's names are always the format's.
[[noreturn]] void fail_name(const TracepointName& event, std::string_view field, const std::string& why)
{
    throw Error(Exit::usage, fmt::format("{} field '{}': {}", event.str(), field, why));
}

bool is_identifier(std::string_view s)
{
    if (s.empty())
        return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    });
}

// The padding member before a field at CURSOR (see emit_struct).
std::string pad_name(std::uint64_t cursor) { return fmt::format("__pad_{}", cursor); }

std::string member_name(const Field& f)
{
    if (f.kind == FieldKind::data_loc)
        return "__data_loc_" + f.name;
    if (f.kind == FieldKind::rel_loc)
        return "__rel_loc_" + f.name;
    return f.name;
}

std::string int_type(std::uint32_t size, bool is_signed)
{
    return fmt::format("__{}{}", is_signed ? 's' : 'u', size * 8);
}

bool valid_int_size(std::uint32_t size) { return size == 1 || size == 2 || size == 4 || size == 8; }

// Text, not bytes: the kernel's char arrays and char __data_loc strings. unsigned char arrays
// hold bytes (hardware addresses, keys).
bool is_text(const Field& f)
{
    return f.elem_type == "char" || f.elem_type == "const char" || f.elem_type == "signed char";
}

// ---- layout ---------------------------------------------------------------------------------

// composite: a struct or union in BTF (uuid_t, guid_t, …), declared as a struct of its bytes:
// a kind libbpf relocates against any kernel struct or union, and read as bytes, as an array is.
enum class Repr { integer, pointer, enumeration, array, dynamic, composite };

struct Member {
    Field field;
    std::string name; // in the struct: the BTF member name
    Repr repr = Repr::integer;
    Repr elem = Repr::integer; // array elements
    bool text = false;
    std::uint32_t align = 1;

    bool flexible() const { return repr == Repr::array && field.size == 0; }
    bool scalar() const { return repr != Repr::array && repr != Repr::dynamic && repr != Repr::composite; }

    std::string decl() const
    {
        const Field& f = field;
        switch (repr) {
        case Repr::integer:
            return int_type(f.size, f.is_signed) + " " + name;
        case Repr::pointer:
            return "void *" + name;
        case Repr::enumeration:
            return fmt::format("tpkit_tp_enum{} {}", f.size * 8, name);
        case Repr::dynamic:
            return "__u32 " + name;
        case Repr::composite:
            return fmt::format("struct {{ __u8 bytes[{}]; }} {}", f.size, name);
        case Repr::array:
            break;
        }
        std::string len = flexible() ? "" : std::to_string(f.array_len);
        if (text)
            return fmt::format("char {}[{}]", name, len);
        if (elem == Repr::pointer)
            return fmt::format("void *{}[{}]", name, len);
        return fmt::format("{} {}[{}]", int_type(align, f.is_signed), name, len);
    }
};

// One struct of the header: an event's (or its class's) record on one kernel.
struct Record {
    std::string name;        // struct tag
    std::string btf_struct;  // empty: no BTF struct, not relocatable
    std::vector<std::string> alike; // BTF structs indistinguishable from btf_struct
    std::vector<Member> members; // after the common fields
    std::uint32_t size = 0;  // sizeof, asserted
    bool packed = false;
    std::vector<std::string> events; // in this header

    bool core() const { return !btf_struct.empty(); }
    std::string body() const
    {
        std::string out;
        for (const auto& m : members)
            out += fmt::format("{}@{};", m.decl(), m.field.offset);
        return out;
    }
};

std::uint32_t natural_align(const Member& m)
{
    switch (m.repr) {
    case Repr::pointer:
        return 8;
    case Repr::enumeration:
        return m.field.size;
    case Repr::dynamic:
        return 4;
    case Repr::integer:
        return m.field.size;
    case Repr::array:
        return m.text ? 1 : m.elem == Repr::pointer ? 8 : m.align;
    case Repr::composite:
        return 1;
    }
    return 1;
}

// The representation of one format field, from BTF (CO-RE: local and kernel types must be of
// the same kind for libbpf to relocate) or from the format text alone.
Member make_member(const TracepointName& event, const Field& f, const std::vector<BtfMember>* btf,
                   const std::string& btf_struct)
{
    Member m;
    m.field = f;
    m.name = member_name(f);
    if (std::string why = identifier_problem(f.name); !why.empty())
        fail_name(event, f.name, why);
    const BtfMember* bm = nullptr;
    if (btf) {
        for (const auto& candidate : *btf)
            if (candidate.name == m.name)
                bm = &candidate;
        if (!bm)
            fail(event, f.name, fmt::format("BTF struct {} has no member {}", btf_struct, m.name));
        if (bm->offset != f.offset || (bm->size != f.size && f.size != 0))
            fail(event, f.name,
                 fmt::format("BTF struct {} has {} at offset {} size {}, the format at offset {} "
                             "size {} (BTF of another kernel?)",
                             btf_struct, m.name, bm->offset, bm->size, f.offset, f.size));
        if (bm->bitfield)
            fail(event, f.name, "a bitfield in BTF");
    }
    BtfKind kind = bm ? bm->kind : BtfKind::other;
    BtfKind elem_kind = bm ? bm->elem_kind : BtfKind::other;
    bool pointer_text = f.elem_type.find('*') != std::string::npos;

    if (f.is_dynamic()) {
        m.repr = Repr::dynamic;
        m.text = is_text(f);
        if (bm && kind != BtfKind::integer)
            fail(event, f.name, "a __data_loc/__rel_loc field that is not an integer in BTF");
    } else if (f.kind == FieldKind::array) {
        m.repr = Repr::array;
        bool ptr = bm ? elem_kind == BtfKind::pointer : pointer_text;
        if (bm && kind != BtfKind::array)
            fail(event, f.name, "an array in the format but not in BTF");
        if (bm && elem_kind != BtfKind::integer && elem_kind != BtfKind::pointer)
            fail(event, f.name, "an array of elements that are neither integers nor pointers");
        m.elem = ptr ? Repr::pointer : Repr::integer;
        std::uint32_t elem_size = 0;
        if (f.array_len)
            elem_size = f.size / f.array_len;
        else if (ptr)
            elem_size = 8;
        else if (is_text(f) || f.elem_type == "u8" || f.elem_type == "unsigned char")
            elem_size = 1;
        else if (f.elem_type == "u32" || f.elem_type == "unsigned int" || f.elem_type == "int")
            elem_size = 4;
        else if (f.elem_type == "unsigned long" || f.elem_type == "long" || f.elem_type == "u64")
            elem_size = 8;
        if (!valid_int_size(elem_size) || (ptr && elem_size != 8))
            fail(event, f.name, fmt::format("array elements of {} bytes", elem_size));
        m.text = is_text(f) && elem_size == 1;
        m.align = elem_size;
    } else if (bm ? kind == BtfKind::pointer : pointer_text) {
        m.repr = Repr::pointer;
        if (f.size != 8)
            fail(event, f.name, fmt::format("a pointer of {} bytes", f.size));
    } else if (bm && kind == BtfKind::enumeration) {
        m.repr = Repr::enumeration;
        if (f.size != 1 && f.size != 2 && f.size != 4)
            fail(event, f.name, fmt::format("an enum of {} bytes", f.size));
    } else if (bm && kind == BtfKind::composite) {
        m.repr = Repr::composite;
        if (f.size == 0)
            fail(event, f.name, "a struct of no bytes");
    } else {
        if (bm && kind != BtfKind::integer)
            fail(event, f.name, "neither an integer, a pointer, an enum, an array nor a struct in BTF");
        m.repr = Repr::integer;
        if (!valid_int_size(f.size))
            fail(event, f.name, fmt::format("an integer of {} bytes", f.size));
    }
    m.align = natural_align(m);
    return m;
}

Record make_record(const TracepointName& event, const EventFormat& format, const Btf& btf,
                   std::string_view flavour)
{
    Record r;
    std::optional<std::vector<BtfMember>> btf_members;
    if (auto found = find_record_struct(btf, format)) {
        r.btf_struct = found->name;
        r.alike = found->alike;
        btf_members = btf.struct_members(found->name);
        r.name = fmt::format("{}___{}", found->name, flavour);
    } else {
        r.name = "tpkit_" + event.event;
    }
    std::vector<Field> fields;
    for (const Field& f : format.fields)
        if (!f.common)
            fields.push_back(f);
    std::stable_sort(fields.begin(), fields.end(),
                     [](const Field& a, const Field& b) { return a.offset < b.offset; });

    // 64-bit ends: offset + size in 32 bits could wrap below the next field's offset.
    std::uint64_t end = 0;
    std::uint32_t struct_align = 4; // the common fields: 8 bytes, int-aligned
    for (const Field& f : format.fields)
        if (f.common)
            end = std::max(end, std::uint64_t(f.offset) + f.size);
    // Every name the struct declares, to refuse a field whose member would repeat one: "ent"
    // holds the common fields, __pad_N the padding, __data_loc_X a dynamic field X.
    std::map<std::string, std::string> taken = {{"ent", "the common fields"}};
    std::uint64_t cursor = 8; // as emit_struct lays out
    for (const Field& f : fields) {
        if (f.offset > cursor)
            taken.emplace(pad_name(cursor), "the padding before field '" + f.name + "'");
        cursor = std::uint64_t(f.offset) + f.size;
    }
    for (const Field& f : fields) {
        std::string name = member_name(f);
        auto [it, fresh] = taken.emplace(name, "field '" + f.name + "'");
        if (!fresh)
            fail_name(event, f.name, fmt::format("its struct member {} is already the member of {}",
                                                 name, it->second));
    }
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const Field& f = fields[i];
        Member m = make_member(event, f, btf_members ? &*btf_members : nullptr, r.btf_struct);
        if (f.offset < end)
            fail(event, f.name, fmt::format("overlaps the previous field (offset {} < {})",
                                            f.offset, end));
        if (m.flexible() && i + 1 != fields.size())
            fail(event, f.name, "a flexible array that is not the last field");
        if (f.offset % m.align != 0)
            r.packed = true;
        struct_align = std::max(struct_align, m.align);
        end = std::uint64_t(f.offset) + f.size;
        if (end > UINT16_MAX + 1)
            fail(event, f.name, fmt::format("ends at byte {}, beyond any trace record", end));
        r.members.push_back(std::move(m));
    }
    r.size = static_cast<std::uint32_t>(r.packed ? end : (end + struct_align - 1) / struct_align *
                                                             struct_align);
    if (!is_identifier(event.event))
        fail(event, "", "the event name is not a C identifier");
    return r;
}

// ---- BTF record lookup ----------------------------------------------------------------------

std::string signature(std::vector<std::string> parts)
{
    std::sort(parts.begin(), parts.end());
    std::string out;
    for (const auto& p : parts)
        out += p + ";";
    return out;
}

std::string format_signature(const EventFormat& format)
{
    std::vector<std::string> parts;
    for (const Field& f : format.fields)
        if (!f.common)
            parts.push_back(fmt::format("{}@{}:{}", member_name(f), f.offset, f.size));
    return signature(std::move(parts));
}

std::string btf_signature(const std::vector<BtfMember>& members)
{
    std::vector<std::string> parts;
    for (const auto& m : members)
        if (m.name != "ent" && m.name != "__data")
            parts.push_back(fmt::format("{}@{}:{}", m.name, m.offset, m.size));
    return signature(std::move(parts));
}

// Every trace_event_raw_* struct of one BTF by layout signature; built once per BTF.
const std::multimap<std::string, std::string>& layout_index(const Btf& btf)
{
    static std::map<std::uint64_t, std::multimap<std::string, std::string>> cache;
    auto it = cache.find(btf.serial());
    if (it != cache.end())
        return it->second;
    std::multimap<std::string, std::string> index;
    for (const auto& name : btf.struct_names(raw_prefix))
        index.emplace(btf_signature(*btf.struct_members(name)), name);
    return cache.emplace(btf.serial(), std::move(index)).first->second;
}

bool same_params(const std::vector<BtfParam>& a, const std::vector<BtfParam>& b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 1; i < a.size(); ++i) // [0] is the void *__data of every probe
        if (a[i].type_id != b[i].type_id)
            return false;
    return true;
}

// Words of CLASS (split at '_') that EVENT does not contain.
std::size_t foreign_words(std::string_view cls, std::string_view event)
{
    std::set<std::string_view> words;
    auto split = [](std::string_view s, auto&& each) {
        while (!s.empty()) {
            auto us = s.find('_');
            std::string_view w = s.substr(0, us);
            if (!w.empty())
                each(w);
            s.remove_prefix(us == std::string_view::npos ? s.size() : us + 1);
        }
    };
    split(event, [&](std::string_view w) { words.insert(w); });
    std::size_t foreign = 0;
    split(cls, [&](std::string_view w) { foreign += words.count(w) == 0; });
    return foreign;
}

} // namespace

std::string identifier_problem(std::string_view name)
{
    // C23's keywords (a superset of C17's), GNU C's, and what clang takes as a type in BPF code.
    static const std::set<std::string_view> keywords = {
        "alignas", "alignof", "auto", "bool", "break", "case", "char", "const", "constexpr",
        "continue", "default", "do", "double", "else", "enum", "extern", "false", "float", "for",
        "goto", "if", "inline", "int", "long", "nullptr", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "static_assert", "struct", "switch",
        "thread_local", "true", "typedef", "typeof", "typeof_unqual", "union", "unsigned", "void",
        "volatile", "while", "_Alignas", "_Alignof", "_Atomic", "_BitInt", "_Bool", "_Complex",
        "_Decimal128", "_Decimal32", "_Decimal64", "_Generic", "_Imaginary", "_Noreturn",
        "_Static_assert", "_Thread_local", "asm", "__asm", "__asm__", "__attribute",
        "__attribute__", "__auto_type", "__builtin_offsetof", "__builtin_va_arg",
        "__builtin_types_compatible_p", "__builtin_choose_expr", "__builtin_va_list",
        "__const", "__const__", "__extension__", "__imag", "__imag__", "__inline", "__inline__",
        "__int128", "__label__", "__real", "__real__", "__restrict", "__restrict__", "__signed",
        "__signed__", "__thread", "__typeof", "__typeof__", "__volatile", "__volatile__",
        "__alignof", "__alignof__", "_Float16", "__fp16", "__bf16"};
    // Object-like macros of the headers a generated header includes (bpf_helpers.h,
    // bpf_core_read.h, vmlinux.h) and of the header itself: a member named so would be expanded.
    static const std::set<std::string_view> macros = {
        "NULL", "BPF_PRINTK_FMT_MOD", "__BPF_CORE_READ_H__", "__BPF_HELPERS__",
        "__always_inline", "__hidden", "__kconfig", "__kptr", "__kptr_ref", "__kptr_untrusted",
        "__percpu_kptr", "__ksym", "__noinline", "__weak", "__VMLINUX_H__", "__arg_ctx",
        "__arg_nonnull", "__arg_nullable", "__arg_trusted", "__arg_arena", "__contains",
        "__long_t", "__ulong_t"};
    if (name.empty())
        return "an empty name";
    if (!is_identifier(name))
        return "not a C identifier";
    if (name.front() >= '0' && name.front() <= '9')
        return "not a C identifier: it starts with a digit";
    if (keywords.count(name))
        return "a C keyword";
    if (macros.count(name) || name.rfind("TPKIT_TP_", 0) == 0)
        return "a macro of the headers it would be used with";
    return "";
}

std::optional<RecordStruct> find_record_struct(const Btf& btf, const EventFormat& format)
{
    std::string own = std::string(raw_prefix) + format.name;
    if (auto members = btf.struct_members(own)) {
        if (btf_signature(*members) != format_signature(format))
            throw Error(Exit::failure,
                        fmt::format("{}:{}: BTF struct {} does not match the format file (BTF of "
                                    "another kernel?)",
                                    format.system, format.name, own));
        return RecordStruct{own, {}};
    }
    const auto& index = layout_index(btf);
    auto [first, last] = index.equal_range(format_signature(format));
    std::vector<std::string> candidates;
    for (auto it = first; it != last; ++it)
        candidates.push_back(it->second);
    if (candidates.empty())
        return std::nullopt;
    if (candidates.size() > 1) {
        // Several classes share the layout: keep those whose probe takes the event's arguments.
        auto proto = btf.typedef_proto_params("btf_trace_" + format.name);
        std::vector<std::string> narrowed;
        for (const auto& c : candidates) {
            auto params = btf.func_params("__bpf_trace_" + c.substr(raw_prefix.size()));
            if (proto && params && same_params(*proto, *params))
                narrowed.push_back(c);
        }
        if (!narrowed.empty())
            candidates = std::move(narrowed);
    }
    // Identical layouts and arguments relocate alike on this kernel; the template a DEFINE_EVENT
    // names is usually made of words of the event's own name.
    std::stable_sort(candidates.begin(), candidates.end(), [&](const auto& a, const auto& b) {
        return foreign_words(a.substr(raw_prefix.size()), format.name) <
               foreign_words(b.substr(raw_prefix.size()), format.name);
    });
    RecordStruct found{candidates.front(), {}};
    found.alike.assign(candidates.begin() + 1, candidates.end());
    return found;
}

namespace {

// ---- emission -------------------------------------------------------------------------------

constexpr std::string_view prelude_head = R"(#pragma once

/* Shared by every generated tracepoint header. */
#ifndef TPKIT_TP_PRELUDE
#define TPKIT_TP_PRELUDE
#ifndef __VMLINUX_H__
/* Without vmlinux.h: the fixed-width types, as linux/types.h spells them (repeating an identical
 * typedef is allowed). */
typedef unsigned char __u8;
typedef signed char __s8;
typedef unsigned short __u16;
typedef short __s16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
#endif
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* Enum members: anonymous enums, which libbpf matches with any kernel enum, of each size. */
typedef enum __attribute__((packed)) { TPKIT_TP_ENUM8_ANY } tpkit_tp_enum8;
typedef enum __attribute__((packed)) { TPKIT_TP_ENUM16_ANY = 0x100 } tpkit_tp_enum16;
typedef enum { TPKIT_TP_ENUM32_ANY } tpkit_tp_enum32;

/* Where a __data_loc/__rel_loc field's bytes are: offset from the record start, length. */
struct tpkit_tp_loc {
	__u32 offset;
	__u32 len;
};

/* Getters return this (negated) when the running kernel's record has no such field. */
#define TPKIT_TP_ENOENT 2

)";

// The common fields, as the kernel's struct trace_entry names them ("common_pid" is its pid).
// No getters: at a classic tracepoint the kernel fills them in only after BPF programs ran (the
// first 8 bytes then hold a struct pt_regs * for the program), so reading them gives pointer
// bytes. The struct stays, for offsets and sizes.
std::string common_struct(const TracepointName& event, const EventFormat& format, const Btf& btf)
{
    auto entry = btf.struct_members("trace_entry");
    std::string out = "/* The common fields every record starts with: the kernel's struct trace_entry.\n"
                      " * BPF programs at a classic tracepoint run before the kernel writes them (the\n"
                      " * first 8 bytes hold a struct pt_regs * then), so there are no getters: use\n"
                      " * bpf_get_current_pid_tgid() for common_pid. */\n"
                      "struct trace_entry___tpkit {\n";
    for (const Field& f : format.fields) {
        if (!f.common)
            continue;
        std::string member = f.name.substr(std::string_view("common_").size());
        if (std::string why = identifier_problem(member); !why.empty())
            fail_name(event, f.name, why);
        bool in_btf = entry && std::any_of(entry->begin(), entry->end(), [&](const BtfMember& m) {
                          return m.name == member && m.offset == f.offset && m.size == f.size;
                      });
        if (!in_btf)
            fail(event, f.name, fmt::format("BTF struct trace_entry has no {} of {} bytes at {}",
                                            member, f.size, f.offset));
        out += fmt::format("\t{} {};\n", int_type(f.size, f.is_signed), member);
    }
    out += "} __attribute__((preserve_access_index));\n\n";
    return out;
}

std::string common_layout(const EventFormat& format)
{
    std::string out;
    for (const Field& f : format.fields)
        if (f.common)
            out += fmt::format("{}@{}:{}{};", f.name, f.offset, f.size, f.is_signed ? "s" : "u");
    return out;
}

std::string guard_name(const std::string& s) { return "TPKIT_TP_STRUCT_" + s; }

std::string emit_struct(const Record& r, std::string_view flavour, std::size_t flavours)
{
    std::string out;
    std::string events;
    for (const auto& e : r.events)
        events += (events.empty() ? "" : ", ") + e;
    if (r.core())
        out += fmt::format("/* {}{}: the kernel's struct {}, relocated by libbpf (CO-RE). */\n",
                           events, flavours > 1 ? fmt::format(" on {}", flavour) : "",
                           r.btf_struct);
    else
        out += fmt::format("/* {}: no BTF struct in the kernel for this event, so nothing to "
                           "relocate against: a plain struct of this kernel's layout. */\n",
                           events);
    if (!r.alike.empty()) {
        std::string alike;
        for (const auto& a : r.alike)
            alike += (alike.empty() ? "" : ", ") + a;
        out += fmt::format("/* The layout and arguments also match {}: chosen by name. */\n", alike);
    }
    out += fmt::format("#ifndef {0}\n#define {0}\nstruct {1} {{\n\tstruct trace_entry___tpkit ent;\n",
                       guard_name(r.name), r.name);
    std::uint32_t cursor = 8;
    for (const auto& m : r.members) {
        if (m.field.offset > cursor)
            out += fmt::format("\t__u8 {}[{}];\n", pad_name(cursor), m.field.offset - cursor);
        out += "\t" + m.decl() + ";";
        if (m.repr == Repr::composite)
            out += fmt::format(" /* {} in the kernel: its bytes */", m.field.type);
        out += "\n";
        cursor = m.field.offset + m.field.size;
    }
    std::vector<std::string> attrs;
    if (r.packed)
        attrs.push_back("packed");
    if (r.core())
        attrs.push_back("preserve_access_index");
    std::string attr_text;
    for (const auto& a : attrs)
        attr_text += (attr_text.empty() ? "" : ", ") + a;
    out += attr_text.empty() ? "};\n" : fmt::format("}} __attribute__(({}));\n", attr_text);
    for (const auto& m : r.members)
        out += fmt::format("_Static_assert(__builtin_offsetof(struct {0}, {1}) == {2}, \"{0}.{1} "
                           "at {2}\");\n",
                           r.name, m.name, m.field.offset);
    out += fmt::format("_Static_assert(sizeof(struct {0}) == {1}, \"sizeof(struct {0}) == {1}\");\n",
                       r.name, r.size);
    out += "#endif\n\n";
    return out;
}

// One field as it is laid out on one or more flavours.
struct Variant {
    const Member* member;
    const Record* record;
    std::string flavour; // the flavour whose struct reads it
};

enum class Shape { scalar, string, bytes };

struct Getters {
    std::set<std::string> names;
    std::string text;

    void claim(const TracepointName& event, const std::string& field, const std::string& name)
    {
        if (!names.insert(name).second)
            fail_name(event, field, "its getter name " + name + " is already taken in this header");
    }
};

std::string var_decls(const std::vector<Variant>& variants)
{
    std::string out;
    std::set<std::string> seen;
    for (const auto& v : variants)
        if (seen.insert(v.record->name).second)
            out += fmt::format("\tstruct {} *{} = ctx;\n", v.record->name,
                               v.record->core() ? v.flavour : "rec");
    return out;
}

std::string var(const Variant& v) { return v.record->core() ? v.flavour : "rec"; }

// Where the member's bytes start, in bytes from the record start, given its u32 LOC.
std::string loc_offset(const Variant& v, const std::string& loc)
{
    if (v.member->field.kind == FieldKind::rel_loc) {
        // __rel_loc counts from the end of the field itself.
        std::string offset = v.record->core()
                                 ? fmt::format("bpf_core_field_offset({}->{})", var(v), v.member->name)
                                 : fmt::format("__builtin_offsetof(struct {}, {})", v.record->name,
                                               v.member->name);
        return fmt::format("{} + 4 + ({} & 0xFFFF)", offset, loc);
    }
    return fmt::format("({} & 0xFFFF)", loc);
}

std::string loc_base(const Variant& v, const std::string& loc)
{
    return "(char *)ctx + " + loc_offset(v, loc);
}

std::string read_scalar(const Variant& v)
{
    if (v.record->core())
        return fmt::format("BPF_CORE_READ({}, {})", var(v), v.member->name);
    return fmt::format("rec->{}", v.member->name);
}

std::string field_size(const Variant& v)
{
    if (v.record->core())
        return fmt::format("bpf_core_field_size({}->{})", var(v), v.member->name);
    return fmt::format("sizeof(rec->{})", v.member->name);
}

// The statements that read one variant into the caller's buffer and return.
std::string read_into(const Variant& v, Shape shape)
{
    const Member& m = *v.member;
    std::string out;
    if (m.repr == Repr::dynamic) {
        out += fmt::format("\t\t__u32 loc = {};\n", read_scalar(v));
        if (shape == Shape::string)
            return out + fmt::format("\n\t\treturn bpf_probe_read_kernel_str(dst, size, {});\n",
                                     loc_base(v, "loc"));
        return out + fmt::format("\t\t__u32 n = loc >> 16;\n\t\tlong err;\n\n"
                                 "\t\tif (n > size)\n\t\t\tn = size;\n"
                                 "\t\terr = bpf_probe_read_kernel(dst, n, {});\n"
                                 "\t\treturn err < 0 ? err : n;\n",
                                 loc_base(v, "loc"));
    }
    // A flexible array's length is not known: read what the caller asks for.
    if (m.flexible())
        out += "\t\t__u32 n = size;\n\n";
    else
        out += fmt::format("\t\t__u32 n = {};\n\n\t\tif (n > size)\n\t\t\tn = size;\n", field_size(v));
    std::string src = fmt::format("&{}->{}", var(v), m.name);
    if (shape == Shape::string)
        return out + fmt::format("\t\treturn bpf_probe_read_kernel_str(dst, n, {});\n", src);
    return out + fmt::format("\t\tlong err = bpf_probe_read_kernel(dst, n, {});\n\n"
                             "\t\treturn err < 0 ? err : n;\n",
                             src);
}

// The load-time test that the running kernel's record is laid out like this variant.
std::string condition(const Variant& v, const std::vector<Variant>& all)
{
    std::string exists = fmt::format("bpf_core_field_exists({}->{})", var(v), v.member->name);
    for (const auto& other : all)
        if (&other != &v && other.member->name == v.member->name)
            return exists + fmt::format(" && bpf_core_field_size({}->{}) == {}", var(v),
                                        v.member->name, v.member->field.size);
    return exists;
}

// Wraps each variant's statements: CO-RE variants under their condition, then the fallback.
std::string branches(const std::vector<Variant>& variants, const std::string& fallback,
                     const std::function<std::string(const Variant&)>& body)
{
    std::string out;
    if (!variants.front().record->core()) {
        std::string statements = body(variants.front());
        // One level less deep: the body is written for an if.
        std::string out;
        for (std::size_t i = 0; i < statements.size(); ++i)
            if (!(statements[i] == '\t' && (i == 0 || statements[i - 1] == '\n')))
                out += statements[i];
        return out;
    }
    for (const auto& v : variants) {
        std::string statements = body(v);
        bool one = std::count(statements.begin(), statements.end(), '\n') == 1;
        out += one ? fmt::format("\tif ({})\n{}", condition(v, variants), statements)
                   : fmt::format("\tif ({}) {{\n{}\t}}\n", condition(v, variants), statements);
    }
    return out + "\treturn " + fallback + ";\n";
}

void emit_getters(const TracepointName& event, const std::string& field,
                  const std::vector<Variant>& variants, Getters& g)
{
    // The shape and type every variant can be returned as.
    bool any_scalar = false, any_buffer = false, all_text = true, any_text = false;
    bool any_pointer = false, any_integer = false, all_dynamic = true;
    const Member* widest = nullptr;
    for (const auto& v : variants) {
        const Member& m = *v.member;
        if (m.scalar()) {
            any_scalar = true;
            (m.repr == Repr::pointer ? any_pointer : any_integer) = true;
            if (m.repr != Repr::pointer && (!widest || m.field.size >= widest->field.size))
                widest = &m;
        } else {
            any_buffer = true;
            all_text = all_text && m.text;
            any_text = any_text || m.text;
        }
        all_dynamic = all_dynamic && m.repr == Repr::dynamic;
    }
    std::string fn = fmt::format("tpkit_{}_{}", event.event, field);
    std::string flavours;
    for (const auto& v : variants)
        flavours += (flavours.empty() ? "" : ", ") + v.flavour;
    if (any_scalar && any_buffer)
        fail(event, field, "a scalar on one kernel and an array on another (" + flavours + ")");
    if (any_pointer && any_integer)
        fail(event, field, "a pointer on one kernel and an integer on another (" + flavours + ")");
    if (any_buffer && any_text != all_text)
        fail(event, field, "text on one kernel and bytes on another (" + flavours + ")");

    g.claim(event, field, fn);
    std::string decls = var_decls(variants);
    if (any_scalar) {
        std::string type = any_pointer ? "void *" : int_type(widest->field.size, widest->field.is_signed);
        g.text += fmt::format("static __always_inline {}{}{}(void *ctx)\n{{\n{}\n", type,
                              any_pointer ? "" : " ", fn, decls);
        g.text += branches(variants, "0", [](const Variant& v) {
            return fmt::format("\t\treturn {};\n", read_scalar(v));
        });
        g.text += "}\n\n";
    } else {
        Shape shape = all_text ? Shape::string : Shape::bytes;
        g.text += fmt::format("static __always_inline long {}(void *ctx, {} *dst, __u32 size)\n{{\n{}\n",
                              fn, shape == Shape::string ? "char" : "void", decls);
        g.text += branches(variants, "-TPKIT_TP_ENOENT",
                           [shape](const Variant& v) { return read_into(v, shape); });
        g.text += "}\n\n";
    }
    if (all_dynamic) {
        std::string loc_fn = fn + "_loc";
        g.claim(event, field, loc_fn);
        g.text += fmt::format("static __always_inline struct tpkit_tp_loc {}(void *ctx)\n{{\n{}"
                              "\tstruct tpkit_tp_loc where = {{}};\n\n",
                              loc_fn, decls);
        g.text += branches(variants, "where", [](const Variant& v) {
            return fmt::format("\t\t__u32 loc = {};\n\n\t\twhere.offset = {};\n"
                               "\t\twhere.len = loc >> 16;\n\t\treturn where;\n",
                               read_scalar(v), loc_offset(v, "loc"));
        });
        g.text += "}\n\n";
    }
}

} // namespace

std::string generate_header(const std::vector<Flavour>& flavours,
                            const std::vector<TracepointName>& events)
{
    if (flavours.empty())
        throw Error(Exit::usage, "no kernel to generate for");
    std::set<std::string> flavour_names;
    // A flavour names a getter's local variable: not one of the getters' own names either.
    static const std::set<std::string_view> getter_names = {"ctx", "dst", "size", "n",
                                                            "err", "loc", "where", "rec"};
    for (const auto& f : flavours) {
        std::string why = identifier_problem(f.name);
        if (why.empty() && getter_names.count(f.name))
            why = "a name the getters use themselves";
        if (!why.empty())
            throw Error(Exit::usage, "bad flavour name '" + f.name + "': " + why);
        if (!flavour_names.insert(f.name).second)
            throw Error(Exit::usage, "repeated flavour name '" + f.name + "'");
    }

    // Records per event and flavour; structs shared by several events (a class) once.
    std::map<std::string, Record> records;
    std::vector<std::string> struct_order;
    struct PerFlavour {
        std::string flavour;
        EventFormat format;
        std::string record;
    };
    std::vector<std::vector<PerFlavour>> per_event;
    std::string common_text, common_key;
    for (const auto& event : events) {
        std::vector<PerFlavour> found;
        for (const auto& fl : flavours) {
            if (!fl.formats->has(event))
                continue;
            EventFormat format = fl.formats->read(event);
            if (common_key.empty()) {
                common_key = common_layout(format);
                common_text = common_struct(event, format, *fl.btf);
            } else if (common_layout(format) != common_key) {
                fail(event, "", "its common fields differ from the other events' on " + fl.name);
            }
            Record r = make_record(event, format, *fl.btf, fl.name);
            auto it = records.find(r.name);
            if (it == records.end()) {
                it = records.emplace(r.name, std::move(r)).first;
                struct_order.push_back(it->first);
            } else if (it->second.body() != r.body()) {
                if (!r.core())
                    fail(event, "", "its layout differs between kernels and, with no BTF struct, "
                                    "cannot be chosen at load time");
                fail(event, "", fmt::format("its layout differs from other events of struct {}",
                                            r.name));
            }
            it->second.events.push_back(event.str());
            found.push_back({fl.name, std::move(format), it->first});
        }
        if (found.empty())
            fail(event, "", "in none of the format sets");
        bool core = records.at(found.front().record).core();
        for (const auto& pf : found) {
            const Record& r = records.at(pf.record);
            if (r.core() != core)
                fail(event, "", "has a BTF struct on one kernel and none on another");
            if (!core && r.body() != records.at(found.front().record).body())
                fail(event, "", "its layout differs between kernels and, with no BTF struct, "
                                "cannot be chosen at load time");
        }
        per_event.push_back(std::move(found));
    }

    std::string out = "/* Generated by tpgen from tracefs format files; do not edit.\n * Kernels:";
    for (const auto& fl : flavours)
        out += fmt::format(" {}={} (BTF {})", fl.name, fl.formats->label(),
                           std::filesystem::path(fl.btf->source()).filename().string());
    out += ".\n"
           " * Per event: its record struct per kernel, fields at the format's offsets (asserted),\n"
           " * and one getter per field, tpkit_<event>_<field>(ctx): scalars are returned; text and\n"
           " * arrays are copied into (dst, size), returning what bpf_probe_read_kernel(_str)\n"
           " * returns (bytes: the count copied); __data_loc/__rel_loc fields also have _loc(ctx)\n"
           " * (offset from the record start, length). A getter chooses at load time the layout\n"
           " * of the running kernel; a field it lacks reads as 0 / -TPKIT_TP_ENOENT.\n"
           " * Compiles alone or after vmlinux.h. */\n";
    out += prelude_head;
    out += common_text;
    out += "#endif /* TPKIT_TP_PRELUDE */\n\n";

    std::set<std::string> emitted;
    Getters getters;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const auto& event = events[i];
        const auto& found = per_event[i];
        out += fmt::format("/* ---- {} ---- */\n\n", event.str());
        for (const auto& pf : found)
            if (emitted.insert(pf.record).second)
                out += emit_struct(records.at(pf.record), pf.flavour, flavours.size());

        // Fields in the newest kernel's order, then those only older kernels have.
        std::vector<std::string> fields;
        for (auto pf = found.rbegin(); pf != found.rend(); ++pf)
            for (const auto& m : records.at(pf->record).members)
                if (std::find(fields.begin(), fields.end(), m.field.name) == fields.end())
                    fields.push_back(m.field.name);

        getters.text.clear();
        out += fmt::format("#ifndef TPKIT_TP_EVENT_{0}\n#define TPKIT_TP_EVENT_{0}\n", event.event);
        for (const auto& field : fields) {
            // One variant per distinct layout of the field (same member, same size), read
            // through the newest flavour that has it.
            std::vector<Variant> variants;
            for (auto pf = found.rbegin(); pf != found.rend(); ++pf) {
                const Record& r = records.at(pf->record);
                for (const auto& m : r.members) {
                    if (m.field.name != field)
                        continue;
                    bool same = std::any_of(variants.begin(), variants.end(), [&](const Variant& v) {
                        return v.member->name == m.name && v.member->field.size == m.field.size &&
                               v.member->repr == m.repr;
                    });
                    if (!same)
                        variants.push_back({&m, &r, pf->flavour});
                }
            }
            // Oldest first reads like the kernel's history.
            std::reverse(variants.begin(), variants.end());
            emit_getters(event, field, variants, getters);
        }
        out += getters.text;
        out += "#endif\n\n";
    }
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
        out.pop_back();
    return out;
}

} // namespace tpkit::tpgen
