// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Read-only lookups in a kernel's BTF: the tracepoint record structs (trace_event_raw_*), the
// raw tracepoint prototypes (btf_trace_* typedefs, __bpf_trace_* functions) and C type names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct btf;

namespace tpkit {

// What a type is once typedefs and qualifiers are looked through.
enum class BtfKind { integer, pointer, enumeration, array, composite, other };

struct BtfMember {
    std::string name;
    std::uint32_t offset = 0;    // bytes from the start of the struct
    std::uint32_t size = 0;      // bytes (0 for a flexible array)
    BtfKind kind = BtfKind::other;
    BtfKind elem_kind = BtfKind::other; // element of an array; == kind otherwise
    bool bitfield = false;
};

struct BtfParam {
    std::string name;     // empty when BTF has no name (typedef'd function pointers)
    std::uint32_t type_id = 0;
    std::uint32_t size = 0;
    BtfKind kind = BtfKind::other;
};

class Btf {
public:
    // Raw BTF (e.g. a copy of /sys/kernel/btf/vmlinux), gzip of raw BTF, or an ELF with .BTF.
    // Throws Error(unknown_target) when the file cannot be read or parsed.
    static Btf load(const std::filesystem::path& file);
    // The running kernel's BTF (/sys/kernel/btf/vmlinux).
    static Btf load_vmlinux();

    Btf(Btf&&) noexcept;
    Btf& operator=(Btf&&) noexcept;
    ~Btf();

    const std::string& source() const { return source_; }
    // Unique per loaded BTF in this process (never reused, unlike an address): a cache key.
    std::uint64_t serial() const { return serial_; }

    // Members of the struct NAME, or nothing when BTF has no such struct.
    std::optional<std::vector<BtfMember>> struct_members(std::string_view name) const;
    // The enumerators of the enum NAME (its value → its name), or nothing when BTF has no such
    // enum: the numbers of an enum such as skb_drop_reason differ between kernels.
    std::optional<std::map<std::int64_t, std::string>> enum_values(std::string_view name) const;
    // Every enumerator of every enum (the first of a name), by name: the values of constants a
    // print fmt names.
    std::map<std::string, std::int64_t, std::less<>> enumerators() const;
    // Names of every struct whose name starts with PREFIX, sorted.
    std::vector<std::string> struct_names(std::string_view prefix) const;
    // Parameters of the function prototype a typedef points to (btf_trace_<event>), or nothing
    // when there is no such typedef to a function pointer.
    std::optional<std::vector<BtfParam>> typedef_proto_params(std::string_view name) const;
    // Parameters of the function NAME (__bpf_trace_<class>), with their names.
    std::optional<std::vector<BtfParam>> func_params(std::string_view name) const;
    // The C spelling of a type used with vmlinux.h ("struct task_struct *", "pid_t",
    // "const char *"), or nothing when it has no simple spelling (function pointers, anonymous
    // structs).
    std::optional<std::string> c_type(std::uint32_t type_id) const;

private:
    Btf(struct btf* btf, std::string source);
    std::vector<BtfParam> params_of(std::uint32_t proto_id) const;
    // The id of the type NAME of KIND (BTF_KIND_*), or 0.
    std::uint32_t find(std::string_view name, int kind) const;

    struct btf* btf_ = nullptr;
    std::string source_;
    std::uint64_t serial_ = 0;
    // Named types, indexed at the first lookup past a few: libbpf's own lookup scans every
    // type, which is cheaper for a tool that checks a tracepoint or two than indexing ~130,000
    // names (tens of milliseconds and megabytes), and dearer for tpgen's hundreds of lookups.
    const std::multimap<std::string, std::uint32_t, std::less<>>& by_name() const;
    mutable std::multimap<std::string, std::uint32_t, std::less<>> by_name_;
    mutable bool indexed_ = false;
    mutable unsigned scans_ = 0;
};

} // namespace tpkit
