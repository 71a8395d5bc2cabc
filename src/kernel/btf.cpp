// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/kernel/btf.hpp"

#include "tpkit/support/error.hpp"

#include <bpf/btf.h>
#include <fmt/format.h>
#include <linux/btf.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace tpkit {
namespace {

constexpr std::uint16_t btf_magic = 0xeB9F;
// A kernel's BTF is a few MiB (6.18's: 6 MiB): anything past this is not one, and reading it
// whole would only exhaust memory.
constexpr std::uint64_t max_btf_size = std::uint64_t(512) << 20;

struct GzCloser {
    void operator()(gzFile f) const { gzclose(f); }
};

// Reads up to WANT bytes in all into DATA; false at the end of the input.
bool read_up_to(gzFile in, std::string& data, std::uint64_t want, const std::filesystem::path& file)
{
    while (data.size() < want) {
        std::size_t at = data.size();
        std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(want - at, 1 << 20));
        data.resize(at + chunk);
        int n = gzread(in, data.data() + at, static_cast<unsigned>(chunk));
        if (n < 0) {
            int err = 0;
            const char* what = gzerror(in, &err);
            throw Error(Exit::unknown_target,
                        "cannot read BTF " + file.string() + ": " +
                            (err == Z_ERRNO ? std::strerror(errno) : what));
        }
        data.resize(at + static_cast<std::size_t>(n));
        if (n == 0)
            return false;
    }
    return true;
}

// Raw BTF from FILE, gunzipped when it is gzip; nothing when FILE is an ELF object (libbpf reads
// its .BTF section itself). Reads what the BTF header says and no more, so an endless input
// (/dev/zero, a pipe) is refused or cut at the size it announces.
std::optional<std::string> read_raw_btf(const std::filesystem::path& file)
{
    std::unique_ptr<gzFile_s, GzCloser> in(gzopen(file.c_str(), "rb"));
    if (!in)
        throw Error(Exit::unknown_target, "cannot read BTF " + file.string() + ": " +
                                              std::strerror(errno));
    std::string data;
    read_up_to(in.get(), data, sizeof(btf_header), file);
    if (data.size() >= 4 && data.compare(0, 4, "\x7f" "ELF") == 0 && gzdirect(in.get())) {
        struct stat st {};
        if (stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            throw Error(Exit::unknown_target,
                        "cannot read BTF " + file.string() + ": an ELF object must be a regular file");
        return std::nullopt;
    }
    btf_header hdr{};
    std::memcpy(&hdr, data.data(), std::min(data.size(), sizeof(hdr)));
    bool swapped = hdr.magic == __builtin_bswap16(btf_magic);
    if (hdr.magic != btf_magic && !swapped)
        throw Error(Exit::unknown_target,
                    file.string() + " is not BTF: neither raw BTF, gzip of it, nor an ELF object");
    if (data.size() < sizeof(hdr))
        throw Error(Exit::unknown_target, "truncated BTF " + file.string() + ": " +
                                              std::to_string(data.size()) + " bytes");
    auto u32 = [&](std::uint32_t v) { return swapped ? __builtin_bswap32(v) : v; };
    std::uint64_t hdr_len = u32(hdr.hdr_len);
    std::uint64_t total = hdr_len + std::max(std::uint64_t(u32(hdr.type_off)) + u32(hdr.type_len),
                                             std::uint64_t(u32(hdr.str_off)) + u32(hdr.str_len));
    if (hdr_len < sizeof(hdr))
        throw Error(Exit::unknown_target, file.string() + " is not BTF: a header of " +
                                              std::to_string(hdr_len) + " bytes");
    if (total > max_btf_size)
        throw Error(Exit::unknown_target,
                    fmt::format("{} is not a kernel's BTF: its header announces {} bytes, more than "
                                "{} MiB",
                                file.string(), total, max_btf_size >> 20));
    if (!read_up_to(in.get(), data, total, file))
        throw Error(Exit::unknown_target, fmt::format("truncated BTF {}: {} of {} bytes",
                                                      file.string(), data.size(), total));
    return data;
}

const btf_type* skip_mods(const struct btf* btf, std::uint32_t& id)
{
    const btf_type* t = btf__type_by_id(btf, id);
    while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
        id = t->type;
        t = btf__type_by_id(btf, id);
    }
    return t;
}

BtfKind kind_of(const btf_type* t)
{
    if (!t)
        return BtfKind::other;
    if (btf_is_int(t))
        return BtfKind::integer;
    if (btf_is_ptr(t))
        return BtfKind::pointer;
    if (btf_is_any_enum(t))
        return BtfKind::enumeration;
    if (btf_is_array(t))
        return BtfKind::array;
    if (btf_is_composite(t))
        return BtfKind::composite;
    return BtfKind::other;
}

std::uint32_t size_of(const struct btf* btf, std::uint32_t id)
{
    long long size = btf__resolve_size(btf, id);
    return size < 0 ? 0 : static_cast<std::uint32_t>(size);
}

} // namespace

Btf Btf::load(const std::filesystem::path& file)
{
    std::optional<std::string> data = read_raw_btf(file);
    struct btf* btf = data ? btf__new(data->data(), static_cast<__u32>(data->size()))
                           : btf__parse(file.c_str(), nullptr); // an ELF object with a .BTF section
    if (!btf)
        throw Error(Exit::unknown_target, "cannot parse BTF " + file.string() + ": " +
                                              std::strerror(errno));
    return Btf(btf, file.string());
}

Btf Btf::load_vmlinux()
{
    struct btf* btf = btf__load_vmlinux_btf();
    if (!btf)
        throw Error(Exit::unknown_target,
                    std::string("cannot load the kernel's BTF (/sys/kernel/btf/vmlinux): ") +
                        std::strerror(errno));
    return Btf(btf, "/sys/kernel/btf/vmlinux");
}

Btf::Btf(struct btf* btf, std::string source) : btf_(btf), source_(std::move(source))
{
    static std::atomic<std::uint64_t> next_serial{1};
    serial_ = next_serial++;
}

const std::multimap<std::string, std::uint32_t, std::less<>>& Btf::by_name() const
{
    if (!indexed_) {
        std::uint32_t count = btf__type_cnt(btf_);
        for (std::uint32_t id = 1; id < count; ++id) {
            const btf_type* t = btf__type_by_id(btf_, id);
            if (t->name_off)
                by_name_.emplace(btf__name_by_offset(btf_, t->name_off), id);
        }
        indexed_ = true;
    }
    return by_name_;
}

std::uint32_t Btf::find(std::string_view name, int kind) const
{
    constexpr unsigned scans_before_index = 8;
    if (!indexed_ && scans_ < scans_before_index) {
        scans_++;
        std::int32_t id = btf__find_by_name_kind(btf_, std::string(name).c_str(), static_cast<std::uint32_t>(kind));
        return id > 0 ? static_cast<std::uint32_t>(id) : 0;
    }
    auto [first, last] = by_name().equal_range(name);
    for (auto it = first; it != last; ++it)
        if (btf_kind(btf__type_by_id(btf_, it->second)) == kind)
            return it->second;
    return 0;
}

Btf::Btf(Btf&& other) noexcept
    : btf_(other.btf_), source_(std::move(other.source_)), serial_(other.serial_),
      by_name_(std::move(other.by_name_)), indexed_(other.indexed_), scans_(other.scans_)
{
    other.btf_ = nullptr;
}

Btf& Btf::operator=(Btf&& other) noexcept
{
    if (this != &other) {
        btf__free(btf_);
        btf_ = other.btf_;
        source_ = std::move(other.source_);
        serial_ = other.serial_;
        by_name_ = std::move(other.by_name_);
        indexed_ = other.indexed_;
        scans_ = other.scans_;
        other.btf_ = nullptr;
    }
    return *this;
}

Btf::~Btf() { btf__free(btf_); }

std::optional<std::vector<BtfMember>> Btf::struct_members(std::string_view name) const
{
    std::uint32_t id = find(name, BTF_KIND_STRUCT);
    if (!id)
        return std::nullopt;
    const btf_type* t = btf__type_by_id(btf_, id);
    std::vector<BtfMember> members;
    const btf_member* m = btf_members(t);
    for (std::uint16_t i = 0; i < btf_vlen(t); ++i, ++m) {
        BtfMember member;
        member.name = btf__name_by_offset(btf_, m->name_off);
        member.offset = btf_member_bit_offset(t, i) / 8;
        member.bitfield = btf_member_bitfield_size(t, i) != 0;
        std::uint32_t type_id = m->type;
        const btf_type* mt = skip_mods(btf_, type_id);
        member.size = size_of(btf_, type_id);
        member.kind = kind_of(mt);
        member.elem_kind = member.kind;
        if (member.kind == BtfKind::array) {
            std::uint32_t elem_id = btf_array(mt)->type;
            member.elem_kind = kind_of(skip_mods(btf_, elem_id));
        }
        members.push_back(std::move(member));
    }
    return members;
}

std::optional<std::map<std::int64_t, std::string>> Btf::enum_values(std::string_view name) const
{
    std::uint32_t id = find(name, BTF_KIND_ENUM);
    std::map<std::int64_t, std::string> values;
    if (id) {
        const btf_type* t = btf__type_by_id(btf_, id);
        const struct btf_enum* e = btf_enum(t);
        for (std::uint16_t i = 0; i < btf_vlen(t); ++i, ++e)
            values.emplace(e->val, btf__name_by_offset(btf_, e->name_off));
        return values;
    }
    id = find(name, BTF_KIND_ENUM64);
    if (!id)
        return std::nullopt;
    const btf_type* t = btf__type_by_id(btf_, id);
    const struct btf_enum64* e = btf_enum64(t);
    for (std::uint16_t i = 0; i < btf_vlen(t); ++i, ++e)
        values.emplace(static_cast<std::int64_t>(btf_enum64_value(e)), btf__name_by_offset(btf_, e->name_off));
    return values;
}

std::map<std::string, std::int64_t, std::less<>> Btf::enumerators() const
{
    std::map<std::string, std::int64_t, std::less<>> values;
    for (std::uint32_t id = 1; id < btf__type_cnt(btf_); id++) {
        const btf_type* t = btf__type_by_id(btf_, id);
        if (btf_is_enum(t)) {
            const struct btf_enum* e = btf_enum(t);
            for (std::uint16_t i = 0; i < btf_vlen(t); ++i, ++e)
                values.emplace(btf__name_by_offset(btf_, e->name_off), e->val);
        } else if (btf_is_enum64(t)) {
            const struct btf_enum64* e = btf_enum64(t);
            for (std::uint16_t i = 0; i < btf_vlen(t); ++i, ++e)
                values.emplace(btf__name_by_offset(btf_, e->name_off),
                               static_cast<std::int64_t>(btf_enum64_value(e)));
        }
    }
    return values;
}

std::vector<std::string> Btf::struct_names(std::string_view prefix) const
{
    std::vector<std::string> names;
    const auto& index = by_name();
    for (auto it = index.lower_bound(prefix);
         it != index.end() && std::string_view(it->first).substr(0, prefix.size()) == prefix; ++it)
        if (btf_is_struct(btf__type_by_id(btf_, it->second)))
            names.push_back(it->first);
    return names;
}

std::vector<BtfParam> Btf::params_of(std::uint32_t proto_id) const
{
    const btf_type* proto = btf__type_by_id(btf_, proto_id);
    std::vector<BtfParam> params;
    const btf_param* p = btf_params(proto);
    for (std::uint16_t i = 0; i < btf_vlen(proto); ++i, ++p) {
        BtfParam param;
        param.name = btf__name_by_offset(btf_, p->name_off);
        param.type_id = p->type;
        std::uint32_t id = p->type;
        param.kind = kind_of(skip_mods(btf_, id));
        param.size = size_of(btf_, id);
        params.push_back(std::move(param));
    }
    return params;
}

std::optional<std::vector<BtfParam>> Btf::typedef_proto_params(std::string_view name) const
{
    std::uint32_t id = find(name, BTF_KIND_TYPEDEF);
    if (!id)
        return std::nullopt;
    const btf_type* ptr = btf__type_by_id(btf_, btf__type_by_id(btf_, id)->type);
    if (!ptr || !btf_is_ptr(ptr))
        return std::nullopt;
    const btf_type* proto = btf__type_by_id(btf_, ptr->type);
    if (!proto || !btf_is_func_proto(proto))
        return std::nullopt;
    return params_of(ptr->type);
}

std::optional<std::vector<BtfParam>> Btf::func_params(std::string_view name) const
{
    std::uint32_t id = find(name, BTF_KIND_FUNC);
    if (!id)
        return std::nullopt;
    return params_of(btf__type_by_id(btf_, id)->type);
}

std::optional<std::string> Btf::c_type(std::uint32_t type_id) const
{
    const btf_type* t = btf__type_by_id(btf_, type_id);
    if (!t)
        return std::nullopt;
    if (btf_is_void(t))
        return "void";
    std::string name = btf__name_by_offset(btf_, t->name_off);
    switch (btf_kind(t)) {
    case BTF_KIND_INT:
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_FLOAT:
        return name;
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION:
    case BTF_KIND_ENUM:
    case BTF_KIND_ENUM64:
    case BTF_KIND_FWD: {
        if (name.empty())
            return std::nullopt;
        const char* tag = btf_is_union(t) || (btf_is_fwd(t) && btf_kflag(t)) ? "union "
                          : btf_is_any_enum(t)                              ? "enum "
                                                                            : "struct ";
        return tag + name;
    }
    case BTF_KIND_CONST:
    case BTF_KIND_VOLATILE:
    case BTF_KIND_RESTRICT: {
        const btf_type* inner = btf__type_by_id(btf_, t->type);
        auto base = c_type(t->type);
        if (!base)
            return std::nullopt;
        const char* qual = btf_is_const(t) ? "const" : btf_is_volatile(t) ? "volatile" : "restrict";
        // A qualified pointer puts its qualifier after the star: "char * const".
        if (inner && btf_is_ptr(inner))
            return *base + " " + qual;
        return std::string(qual) + " " + *base;
    }
    case BTF_KIND_TYPE_TAG:
        return c_type(t->type);
    case BTF_KIND_PTR: {
        std::uint32_t pointee = t->type;
        const btf_type* target = skip_mods(btf_, pointee);
        if (target && (btf_is_func_proto(target) || btf_is_array(target)))
            return std::nullopt;
        auto base = c_type(t->type);
        if (!base)
            return std::nullopt;
        return *base + (base->back() == '*' ? "*" : " *");
    }
    default:
        return std::nullopt;
    }
}

} // namespace tpkit
