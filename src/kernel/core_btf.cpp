// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What libbpf 1.1's CO-RE matching (relo_core.c, bpf_core_add_cands) reads of the target BTF,
// and so what is kept:
// - candidates: every type of the local root's kind (enums of either size alike) whose name,
//   without its ___flavour, is the local one's;
// - a field access: each named step is searched in the composite's members in order, going
//   into anonymous members, the first of that name deciding; non-matching named members are
//   only skipped, so they go, and the order, offsets and bitfield sizes of what stays are the
//   kernel's. An array step needs the array and its element's size (and, for a zero-length
//   array, whether it is its struct's last member). The field read needs its type's kind,
//   size, int encoding, enum name and signedness; a pointer's target is never looked at
//   there, so it becomes void;
// - a type relocation compares kinds through pointers, arrays and function prototypes, never
//   into members: structs stay with their size and the members kept for fields;
// - an enumerator: the candidate's enumerators of that name (the first decides), in order.
// Where this does not hold it gives up and libbpf reads everything: a relocation kind not
// above (type_matches), a root with no candidate in vmlinux that a module's BTF names (libbpf
// then searches the modules).
#include "tpkit/kernel/core_btf.hpp"

#include "tpkit/support/error.hpp"

#include <bpf/btf.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/bpf.h>
#include <linux/btf.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tpkit {
namespace {

// Thrown inside: the reason libbpf needs the whole BTF.
struct Unsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// libbpf's bpf_core_essential_name_len(): the name without a "___flavour" suffix.
std::string_view essential_name(std::string_view name)
{
    for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(name.size()) - 5; i >= 0; i--) {
        const char* s = name.data() + i;
        if (s[0] != '_' && s[1] == '_' && s[2] == '_' && s[3] == '_' && s[4] != '_')
            return name.substr(0, i + 1);
    }
    return name;
}

bool kinds_core_compatible(int a, int b)
{
    auto is_enum = [](int k) { return k == BTF_KIND_ENUM || k == BTF_KIND_ENUM64; };
    return a == b || (is_enum(a) && is_enum(b));
}

bool is_mod_or_typedef(int kind)
{
    return kind == BTF_KIND_TYPEDEF || kind == BTF_KIND_VOLATILE || kind == BTF_KIND_CONST ||
           kind == BTF_KIND_RESTRICT || kind == BTF_KIND_TYPE_TAG;
}

// Bytes that follow struct btf_type for a record of KIND with VLEN entries.
std::size_t extra_size(int kind, std::uint32_t vlen)
{
    switch (kind) {
    case BTF_KIND_INT: return 4;
    case BTF_KIND_ARRAY: return sizeof(struct btf_array);
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION: return vlen * sizeof(struct btf_member);
    case BTF_KIND_ENUM: return vlen * sizeof(struct btf_enum);
    case BTF_KIND_FUNC_PROTO: return vlen * sizeof(struct btf_param);
    case BTF_KIND_VAR: return sizeof(struct btf_var);
    case BTF_KIND_DATASEC: return vlen * sizeof(struct btf_var_secinfo);
    case BTF_KIND_DECL_TAG: return sizeof(struct btf_decl_tag);
    case BTF_KIND_ENUM64: return vlen * sizeof(struct btf_enum64);
    case BTF_KIND_PTR:
    case BTF_KIND_FWD:
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_VOLATILE:
    case BTF_KIND_CONST:
    case BTF_KIND_RESTRICT:
    case BTF_KIND_FUNC:
    case BTF_KIND_FLOAT:
    case BTF_KIND_TYPE_TAG: return 0;
    default: throw Unsupported("the kernel's BTF has a type kind " + std::to_string(kind));
    }
}

// ---- the object: its BTF and CO-RE relocations ------------------------------------------------

// struct btf_ext_header of libbpf (not in the UAPI headers); core_relo_* follow line_info_len.
struct BtfExtHeader {
    std::uint16_t magic;
    std::uint8_t version;
    std::uint8_t flags;
    std::uint32_t hdr_len;
    std::uint32_t func_info_off, func_info_len, line_info_off, line_info_len;
    std::uint32_t core_relo_off, core_relo_len;
};

struct Step {
    std::string member; // a named member, or empty for an array index
};

// One relocation, as the kernel's side of it needs it.
struct Relocation {
    enum class Kind { field, type, enumerator } kind;
    std::string root_name; // essential
    int root_kind = 0;
    std::vector<Step> steps; // field: after the root's own index
    std::string enumerator;  // enumerator: essential name
};

struct ElfSections {
    const void* btf = nullptr;
    std::size_t btf_size = 0;
    const void* btf_ext = nullptr;
    std::size_t btf_ext_size = 0;
};

ElfSections find_sections(const void* elf_bytes, std::size_t size)
{
    ElfSections found;
    elf_version(EV_CURRENT);
    // libbpf reads the skeleton's bytes the same way (bpf_object__open_mem).
    std::unique_ptr<Elf, int (*)(Elf*)> elf(
        elf_memory(static_cast<char*>(const_cast<void*>(elf_bytes)), size), &elf_end);
    std::size_t names = 0;
    if (!elf || elf_getshdrstrndx(elf.get(), &names))
        throw Unsupported("the BPF object is no ELF libelf reads");
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf.get(), scn))) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr))
            continue;
        const char* name = elf_strptr(elf.get(), names, shdr.sh_name);
        if (!name || (std::strcmp(name, ".BTF") && std::strcmp(name, ".BTF.ext")))
            continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (!data || !data->d_buf)
            continue;
        // The sections' bytes are the caller's (elf_memory does not copy), valid after elf_end.
        const void* start = static_cast<const char*>(elf_bytes) + shdr.sh_offset;
        if (!std::strcmp(name, ".BTF"))
            found = {start, data->d_size, found.btf_ext, found.btf_ext_size};
        else
            found = {found.btf, found.btf_size, start, data->d_size};
    }
    return found;
}

std::uint32_t skip_local_mods(const btf* local, std::uint32_t id)
{
    const btf_type* t = btf__type_by_id(local, id);
    while (t && is_mod_or_typedef(btf_kind(t))) {
        id = t->type;
        t = btf__type_by_id(local, id);
    }
    if (!t)
        throw Unsupported("a CO-RE relocation names a type the object's BTF lacks");
    return id;
}

// bpf_core_parse_spec(), keeping names instead of indices.
Relocation parse_relocation(const btf* local, const bpf_core_relo& relo)
{
    Relocation r{};
    const btf_type* root = btf__type_by_id(local, relo.type_id);
    if (!root)
        throw Unsupported("a CO-RE relocation names a type the object's BTF lacks");
    r.root_kind = btf_kind(root);
    r.root_name = std::string(essential_name(btf__name_by_offset(local, root->name_off)));
    switch (relo.kind) {
    case BPF_CORE_TYPE_ID_TARGET:
    case BPF_CORE_TYPE_EXISTS:
    case BPF_CORE_TYPE_SIZE:
        r.kind = Relocation::Kind::type;
        return r;
    case BPF_CORE_ENUMVAL_EXISTS:
    case BPF_CORE_ENUMVAL_VALUE:
        r.kind = Relocation::Kind::enumerator;
        break;
    case BPF_CORE_FIELD_BYTE_OFFSET:
    case BPF_CORE_FIELD_BYTE_SIZE:
    case BPF_CORE_FIELD_EXISTS:
    case BPF_CORE_FIELD_SIGNED:
    case BPF_CORE_FIELD_LSHIFT_U64:
    case BPF_CORE_FIELD_RSHIFT_U64:
        r.kind = Relocation::Kind::field;
        break;
    default:
        throw Unsupported("CO-RE relocation kind " + std::to_string(relo.kind));
    }
    std::vector<std::uint32_t> access;
    std::string_view spec = btf__name_by_offset(local, relo.access_str_off);
    for (std::size_t at = 0; at < spec.size();) {
        std::size_t end = spec.find(':', at);
        if (end == std::string_view::npos)
            end = spec.size();
        access.push_back(static_cast<std::uint32_t>(std::stoul(std::string(spec.substr(at, end - at)))));
        at = end + 1;
    }
    if (r.root_name.empty() || access.empty())
        throw Unsupported("a CO-RE relocation libbpf would refuse");
    std::uint32_t id = skip_local_mods(local, relo.type_id);
    const btf_type* t = btf__type_by_id(local, id);
    if (r.kind == Relocation::Kind::enumerator) {
        if (!btf_is_any_enum(t) || access.size() != 1 || access[0] >= btf_vlen(t))
            throw Unsupported("an enumerator relocation libbpf would refuse");
        std::uint32_t name_off = btf_is_enum(t) ? btf_enum(t)[access[0]].name_off
                                                : btf_enum64(t)[access[0]].name_off;
        r.enumerator = std::string(essential_name(btf__name_by_offset(local, name_off)));
        return r;
    }
    for (std::size_t i = 1; i < access.size(); i++) {
        t = btf__type_by_id(local, id = skip_local_mods(local, id));
        if (btf_is_composite(t)) {
            if (access[i] >= btf_vlen(t))
                throw Unsupported("a field relocation libbpf would refuse");
            const btf_member* m = btf_members(t) + access[i];
            if (m->name_off) // anonymous members are walked through, not matched
                r.steps.push_back({btf__name_by_offset(local, m->name_off)});
            id = m->type;
        } else if (btf_is_array(t)) {
            r.steps.push_back({});
            id = btf_array(t)->type;
        } else {
            throw Unsupported("a field relocation libbpf would refuse");
        }
    }
    return r;
}

std::vector<Relocation> object_relocations(const ElfSections& sections)
{
    std::vector<Relocation> relocations;
    if (!sections.btf_ext || sections.btf_ext_size < offsetof(BtfExtHeader, core_relo_off))
        return relocations;
    BtfExtHeader header{};
    std::memcpy(&header, sections.btf_ext,
                std::min<std::size_t>(sizeof(header), sections.btf_ext_size));
    if (header.hdr_len < sizeof(header) || header.core_relo_len == 0)
        return relocations;
    if (!sections.btf)
        throw Unsupported("the BPF object has CO-RE relocations and no .BTF");
    std::unique_ptr<btf, void (*)(btf*)> local(btf__new(sections.btf, sections.btf_size), &btf__free);
    if (!local)
        throw Unsupported("libbpf cannot read the object's BTF");

    const auto* bytes = static_cast<const std::uint8_t*>(sections.btf_ext);
    std::size_t at = header.hdr_len + header.core_relo_off;
    std::size_t end = at + header.core_relo_len;
    auto u32 = [&](std::size_t off) {
        if (off + 4 > sections.btf_ext_size || off + 4 > end)
            throw Unsupported("the object's .BTF.ext is cut short");
        std::uint32_t v;
        std::memcpy(&v, bytes + off, 4);
        return v;
    };
    std::uint32_t record_size = u32(at);
    if (record_size < sizeof(bpf_core_relo))
        throw Unsupported("the object's .BTF.ext is cut short");
    for (at += 4; at < end;) {
        std::uint32_t count = u32(at + 4);
        at += 8;
        for (std::uint32_t i = 0; i < count; i++, at += record_size) {
            bpf_core_relo relo;
            if (at + sizeof(relo) > end)
                throw Unsupported("the object's .BTF.ext is cut short");
            std::memcpy(&relo, bytes + at, sizeof(relo));
            if (relo.kind != BPF_CORE_TYPE_ID_LOCAL) // needs nothing of the kernel's
                relocations.push_back(parse_relocation(local.get(), relo));
        }
    }
    return relocations;
}

// ---- the kernel's BTF, read in pieces -------------------------------------------------------

class KernelBtf {
public:
    explicit KernelBtf(const std::filesystem::path& file)
    {
        fd_ = open(file.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0)
            throw Unsupported(file.string() + ": " + std::strerror(errno));
        read_at(0, &header_, sizeof(header_));
        if (header_.magic != BTF_MAGIC || header_.hdr_len < sizeof(header_))
            throw Unsupported(file.string() + " is not raw BTF");
        types_start_ = header_.hdr_len + header_.type_off;
        strings_start_ = header_.hdr_len + header_.str_off;
    }
    KernelBtf(const KernelBtf&) = delete;
    KernelBtf& operator=(const KernelBtf&) = delete;
    ~KernelBtf() { close(fd_); }

    // Calls found(offset, string) for each string of the string section, once.
    template <class Found>
    void scan_strings(Found found)
    {
        std::string pending; // a string cut by the end of a piece
        std::uint32_t pending_off = 0;
        std::vector<char> piece(piece_size);
        for (std::uint32_t done = 0; done < header_.str_len;) {
            std::uint32_t n = std::min<std::uint32_t>(piece_size, header_.str_len - done);
            read_at(strings_start_ + done, piece.data(), n);
            std::uint32_t start = 0;
            for (const char* nul; (nul = static_cast<const char*>(std::memchr(piece.data() + start, 0, n - start)));) {
                auto i = static_cast<std::uint32_t>(nul - piece.data());
                if (!pending.empty() || start == 0) {
                    pending.append(piece.data() + start, i - start);
                    found(pending_off, std::string_view(pending));
                    pending.clear();
                } else {
                    found(done + start, std::string_view(piece.data() + start, i - start));
                }
                start = i + 1;
                pending_off = done + start;
            }
            pending.append(piece.data() + start, n - start);
            done += n;
        }
    }

    // Calls seen(id, record) for each type in order, records the offset of each.
    template <class Seen>
    void scan_types(Seen seen)
    {
        std::vector<std::uint8_t> buffer(piece_size);
        std::size_t have = 0, at = 0; // bytes in buffer, read position in it
        std::uint32_t consumed = 0;   // section bytes before buffer[0]
        auto ensure = [&](std::size_t n) {
            if (have - at >= n)
                return;
            std::memmove(buffer.data(), buffer.data() + at, have - at);
            consumed += static_cast<std::uint32_t>(at);
            have -= at;
            at = 0;
            if (buffer.size() < n)
                buffer.resize(n);
            std::size_t want = std::min<std::size_t>(buffer.size() - have, header_.type_len - consumed - have);
            read_at(types_start_ + consumed + have, buffer.data() + have, want);
            have += want;
            if (have < n)
                throw Unsupported("the kernel's BTF ends inside a type");
        };
        offsets_.assign(1, 0); // [0] is void
        while (consumed + at < header_.type_len) {
            ensure(sizeof(btf_type));
            btf_type t;
            std::memcpy(&t, buffer.data() + at, sizeof(t));
            std::size_t size = sizeof(btf_type) + extra_size(btf_kind(&t), btf_vlen(&t));
            ensure(size);
            offsets_.push_back(consumed + static_cast<std::uint32_t>(at));
            seen(static_cast<std::uint32_t>(offsets_.size() - 1), t);
            at += size;
        }
    }

    std::size_t type_count() const { return offsets_.size(); }
    std::uint32_t string_bytes() const { return header_.str_len; }

    // The record of type ID (struct btf_type and what follows), read once.
    const btf_type* type(std::uint32_t id)
    {
        if (id == 0 || id >= offsets_.size())
            throw Unsupported("the kernel's BTF refers to type " + std::to_string(id) + ", which it lacks");
        auto& record = types_[id];
        if (record.empty()) {
            btf_type t;
            read_at(types_start_ + offsets_[id], &t, sizeof(t));
            std::size_t size = sizeof(t) + extra_size(btf_kind(&t), btf_vlen(&t));
            record.resize((size + 3) / 4);
            read_at(types_start_ + offsets_[id], record.data(), size);
        }
        return reinterpret_cast<const btf_type*>(record.data());
    }

    const std::string& name(std::uint32_t off)
    {
        auto [it, added] = names_.try_emplace(off);
        if (added) {
            char piece[256];
            for (std::uint32_t at = off; at < header_.str_len;) {
                std::size_t n = std::min<std::size_t>(sizeof(piece), header_.str_len - at);
                read_at(strings_start_ + at, piece, n);
                std::size_t len = strnlen(piece, n);
                it->second.append(piece, len);
                if (len < n)
                    break;
                at += static_cast<std::uint32_t>(n);
            }
        }
        return it->second;
    }

    std::uint32_t skip_mods(std::uint32_t id)
    {
        while (id && is_mod_or_typedef(btf_kind(type(id))))
            id = type(id)->type;
        return id;
    }

private:
    static constexpr std::uint32_t piece_size = 64 * 1024;

    void read_at(std::uint64_t off, void* into, std::size_t n)
    {
        auto* p = static_cast<char*>(into);
        while (n) {
            ssize_t got = pread(fd_, p, n, static_cast<off_t>(off));
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                throw Unsupported("cannot read the kernel's BTF: " +
                                  std::string(got < 0 ? std::strerror(errno) : "it ends early"));
            p += got, off += got, n -= static_cast<std::size_t>(got);
        }
    }

    int fd_ = -1;
    btf_header header_{};
    std::uint64_t types_start_ = 0, strings_start_ = 0;
    std::vector<std::uint32_t> offsets_;
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> types_;
    std::unordered_map<std::uint32_t, std::string> names_;
};

// ---- what to keep, and writing it ------------------------------------------------------------

struct Keep {
    std::set<std::uint32_t> members;     // of a struct or union, by index
    std::set<std::uint32_t> enumerators; // of an enum, by index
    bool pointee = false;                // of a pointer: else it points to void
};

// What the pass over the kernel's strings found, so that names need not be read one by one:
// where each string a relocation looks for lies, and where empty strings lie.
struct NamedStrings {
    std::unordered_map<std::uint32_t, std::string> roots;       // flavour aside, a root type sought
    std::unordered_map<std::uint32_t, std::string> members;     // exactly a member name sought
    std::unordered_map<std::uint32_t, std::string> enumerators; // flavour aside, an enumerator sought
    std::unordered_set<std::uint32_t> empty;
};

class Cut {
public:
    Cut(KernelBtf& kernel, const NamedStrings& strings) : kernel_(kernel), strings_(strings) {}

    void keep(std::uint32_t id)
    {
        if (id)
            keep_[id];
    }

    // Through typedefs and qualifiers, each kept; the type they name.
    std::uint32_t through_mods(std::uint32_t id)
    {
        while (id && is_mod_or_typedef(btf_kind(kernel_.type(id)))) {
            keep(id);
            id = kernel_.type(id)->type;
        }
        keep(id);
        return id;
    }

    // What libbpf reads of a type it compares or sizes. A pointer's target is read only when
    // types are compared (follow_pointers), never for a field.
    void shape(std::uint32_t id, bool follow_pointers)
    {
        if (!id || !shaped_.insert({id, follow_pointers}).second)
            return;
        keep(id);
        const btf_type* t = kernel_.type(id);
        switch (btf_kind(t)) {
        case BTF_KIND_INT:
        case BTF_KIND_FLOAT:
        case BTF_KIND_FWD:
        case BTF_KIND_ENUM:
        case BTF_KIND_ENUM64:
        case BTF_KIND_STRUCT:
        case BTF_KIND_UNION:
            return;
        case BTF_KIND_PTR:
            if (follow_pointers) {
                keep_[id].pointee = true;
                shape(t->type, true);
            }
            return;
        case BTF_KIND_ARRAY: {
            struct btf_array a = *btf_array(t);
            shape(a.type, follow_pointers);
            shape(a.index_type, false);
            return;
        }
        case BTF_KIND_FUNC_PROTO: {
            std::uint32_t ret = t->type;
            std::vector<std::uint32_t> params;
            for (std::uint32_t i = 0; i < btf_vlen(t); i++)
                params.push_back(btf_params(t)[i].type);
            shape(ret, follow_pointers);
            for (auto p : params)
                shape(p, follow_pointers);
            return;
        }
        default:
            if (is_mod_or_typedef(btf_kind(t))) {
                shape(t->type, follow_pointers);
                return;
            }
            throw Unsupported("a relocation reaches a type of kind " + std::to_string(btf_kind(t)));
        }
    }

    // A place a field access has reached: the type there and, after a named member, the
    // composite holding it and the member's index in it.
    struct Reached {
        std::uint32_t type = 0;
        std::uint32_t holder = 0;
        std::uint32_t index = 0;
    };

    // bpf_core_match_member(): the members of composite ID named NAME, through anonymous
    // members, each kept with the path to it, into OUT.
    bool find_member(std::uint32_t id, const std::string& name, std::vector<Reached>& out)
    {
        const btf_type* t = kernel_.type(id);
        if (!btf_is_composite(t))
            return false;
        std::vector<btf_member> members(btf_members(t), btf_members(t) + btf_vlen(t));
        bool found = false;
        for (std::uint32_t i = 0; i < members.size(); i++) {
            const btf_member& m = members[i];
            if (!m.name_off || strings_.empty.count(m.name_off)) {
                std::uint32_t inner = kernel_.skip_mods(m.type);
                if (inner && btf_is_composite(kernel_.type(inner)) && find_member(inner, name, out)) {
                    through_mods(m.type);
                    keep_[id].members.insert(i);
                    found = true;
                }
            } else if (auto it = strings_.members.find(m.name_off);
                       it != strings_.members.end() && it->second == name) {
                keep_[id].members.insert(i);
                out.push_back({m.type, id, i});
                return true; // the first named match decides, compatible or not
            }
        }
        return found;
    }

    void field(std::uint32_t candidate, const std::vector<Step>& steps)
    {
        keep(candidate);
        std::vector<Reached> at{{candidate}};
        shape(candidate, false); // the root's size: its index scales it
        for (const Step& step : steps) {
            std::vector<Reached> next;
            for (const Reached& place : at) {
                std::uint32_t id = through_mods(place.type);
                if (!id)
                    continue;
                if (!step.member.empty()) {
                    find_member(id, step.member, next);
                    continue;
                }
                const btf_type* t = kernel_.type(id);
                if (!btf_is_array(t))
                    continue;
                struct btf_array a = *btf_array(t);
                if (a.nelems == 0 && place.holder)
                    keep_last_member(place);
                shape(a.index_type, false);
                next.push_back({a.type});
            }
            at = std::move(next);
        }
        for (const Reached& place : at)
            shape(place.type, false);
    }

    // A zero-length array may be indexed past its end only as its struct's last member
    // (is_flex_arr()): so that a member last in what is kept is last in the kernel's struct, a
    // kernel's last member the access does not reach is kept too.
    void keep_last_member(const Reached& place)
    {
        const btf_type* holder = kernel_.type(place.holder);
        std::uint32_t last = btf_vlen(holder) - 1;
        if (place.index == last)
            return;
        std::uint32_t type = btf_members(holder)[last].type;
        keep_[place.holder].members.insert(last);
        shape(type, false);
    }

    void enumerator(std::uint32_t candidate, const std::string& name)
    {
        std::uint32_t id = through_mods(candidate);
        if (!id)
            return;
        const btf_type* t = kernel_.type(id);
        if (!btf_is_any_enum(t))
            return;
        std::vector<std::uint32_t> names;
        for (std::uint32_t i = 0; i < btf_vlen(t); i++)
            names.push_back(btf_is_enum(t) ? btf_enum(t)[i].name_off : btf_enum64(t)[i].name_off);
        for (std::uint32_t i = 0; i < names.size(); i++)
            if (auto it = strings_.enumerators.find(names[i]);
                it != strings_.enumerators.end() && it->second == name)
                keep_[id].enumerators.insert(i);
    }

    std::size_t kept() const { return keep_.size(); }

    // Raw BTF of what is kept, in the kernel's order, ids renumbered.
    std::vector<std::uint8_t> write()
    {
        std::map<std::uint32_t, std::uint32_t> new_id;
        for (const auto& [id, keep] : keep_)
            new_id.emplace(id, static_cast<std::uint32_t>(new_id.size() + 1));
        auto id_of = [&](std::uint32_t id) -> std::uint32_t {
            if (!id)
                return 0;
            auto it = new_id.find(id);
            if (it == new_id.end())
                throw Unsupported("internal: type " + std::to_string(id) + " is referred to and not kept");
            return it->second;
        };
        std::string strings(1, '\0');
        std::unordered_map<std::string, std::uint32_t> string_off;
        auto str = [&](std::uint32_t off) -> std::uint32_t {
            if (!off)
                return 0;
            const std::string& s = kernel_.name(off);
            if (s.empty())
                return 0;
            auto [it, added] = string_off.try_emplace(s, static_cast<std::uint32_t>(strings.size()));
            if (added)
                strings.append(s).push_back('\0');
            return it->second;
        };

        std::vector<std::uint8_t> types;
        auto put = [&](const void* p, std::size_t n) {
            types.insert(types.end(), static_cast<const std::uint8_t*>(p),
                         static_cast<const std::uint8_t*>(p) + n);
        };
        for (const auto& [id, keep] : keep_) {
            const btf_type* t = kernel_.type(id);
            int kind = btf_kind(t);
            btf_type out = *t;
            out.name_off = str(t->name_off);
            auto with_vlen = [&](std::size_t vlen) {
                out.info = (t->info & ~0xffffu) | static_cast<std::uint32_t>(vlen);
            };
            switch (kind) {
            case BTF_KIND_INT:
                put(&out, sizeof(out));
                put(t + 1, 4);
                break;
            case BTF_KIND_FLOAT:
            case BTF_KIND_FWD:
                put(&out, sizeof(out));
                break;
            case BTF_KIND_PTR:
                out.type = keep.pointee ? id_of(t->type) : 0;
                put(&out, sizeof(out));
                break;
            case BTF_KIND_ARRAY: {
                struct btf_array a = *btf_array(t);
                a.type = id_of(a.type);
                a.index_type = id_of(a.index_type);
                put(&out, sizeof(out));
                put(&a, sizeof(a));
                break;
            }
            case BTF_KIND_STRUCT:
            case BTF_KIND_UNION: {
                with_vlen(keep.members.size());
                put(&out, sizeof(out));
                for (std::uint32_t i : keep.members) {
                    btf_member m = btf_members(t)[i];
                    m.name_off = str(m.name_off);
                    m.type = id_of(m.type);
                    put(&m, sizeof(m));
                }
                break;
            }
            case BTF_KIND_ENUM:
            case BTF_KIND_ENUM64: {
                with_vlen(keep.enumerators.size());
                put(&out, sizeof(out));
                for (std::uint32_t i : keep.enumerators) {
                    if (kind == BTF_KIND_ENUM) {
                        struct btf_enum e = btf_enum(t)[i];
                        e.name_off = str(e.name_off);
                        put(&e, sizeof(e));
                    } else {
                        struct btf_enum64 e = btf_enum64(t)[i];
                        e.name_off = str(e.name_off);
                        put(&e, sizeof(e));
                    }
                }
                break;
            }
            case BTF_KIND_FUNC_PROTO: {
                out.type = id_of(t->type);
                put(&out, sizeof(out));
                for (std::uint32_t i = 0; i < btf_vlen(t); i++) {
                    btf_param p = {0, id_of(btf_params(t)[i].type)}; // names are not compared
                    put(&p, sizeof(p));
                }
                break;
            }
            default:
                if (!is_mod_or_typedef(kind))
                    throw Unsupported("internal: a kept type of kind " + std::to_string(kind));
                out.type = id_of(t->type);
                put(&out, sizeof(out));
            }
        }

        btf_header header{};
        header.magic = BTF_MAGIC;
        header.version = BTF_VERSION;
        header.hdr_len = sizeof(header);
        header.type_off = 0;
        header.type_len = static_cast<std::uint32_t>(types.size());
        header.str_off = header.type_len;
        header.str_len = static_cast<std::uint32_t>(strings.size());
        std::vector<std::uint8_t> raw;
        raw.reserve(sizeof(header) + types.size() + strings.size());
        const auto* header_bytes = reinterpret_cast<const std::uint8_t*>(&header);
        raw.insert(raw.end(), header_bytes, header_bytes + sizeof(header));
        raw.insert(raw.end(), types.begin(), types.end());
        raw.insert(raw.end(), strings.begin(), strings.end());
        return raw;
    }

private:
    KernelBtf& kernel_;
    const NamedStrings& strings_;
    std::map<std::uint32_t, Keep> keep_;
    std::set<std::pair<std::uint32_t, bool>> shaped_;
};

// Whether the BTF of a loaded module (/sys/kernel/btf/MODULE, beside vmlinux) has a string
// NAME, flavour aside: where none has, no module has a type of that name.
bool module_may_have(const std::filesystem::path& vmlinux, std::string_view name)
{
    if (vmlinux.filename() != "vmlinux")
        return true; // a BTF file of no running kernel: its modules are unknown
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(vmlinux.parent_path(), error)) {
        if (entry.path().filename() == "vmlinux")
            continue;
        bool found = false;
        KernelBtf module(entry.path());
        module.scan_strings([&](std::uint32_t, std::string_view s) {
            found = found || essential_name(s) == name;
        });
        if (found)
            return true;
    }
    return bool(error);
}

struct CutBtf {
    std::vector<std::uint8_t> raw;
    std::size_t types_kept = 0;
    std::size_t kernel_types = 0;
};

// The cut BTF for RELOCATIONS: candidates found by one pass over the strings and one over the
// types.
CutBtf cut(const std::vector<Relocation>& relocations, const std::filesystem::path& file)
{
    KernelBtf kernel(file);
    std::unordered_set<std::string_view> roots, members, enumerators;
    std::vector<bool> sought_lengths; // to hash only the strings of a sought name's length
    auto seek = [&](std::unordered_set<std::string_view>& set, std::string_view name) {
        set.insert(name);
        if (sought_lengths.size() <= name.size())
            sought_lengths.resize(name.size() + 1);
        sought_lengths[name.size()] = true;
    };
    for (const auto& r : relocations) {
        seek(roots, r.root_name);
        for (const Step& step : r.steps)
            if (!step.member.empty())
                seek(members, step.member);
        if (!r.enumerator.empty())
            seek(enumerators, r.enumerator);
    }
    NamedStrings named;
    // To know that names are read whole: where each string starts.
    std::vector<bool> starts(kernel.string_bytes());
    kernel.scan_strings([&](std::uint32_t off, std::string_view s) {
        starts[off] = true;
        if (s.empty()) {
            named.empty.insert(off);
            return;
        }
        auto sought = [&](std::string_view name) {
            return name.size() < sought_lengths.size() && sought_lengths[name.size()];
        };
        if (sought(s) && members.count(s))
            named.members.emplace(off, std::string(s));
        std::string_view essential = s.find("___") == std::string_view::npos ? s : essential_name(s);
        if (!sought(essential))
            return;
        if (roots.count(essential))
            named.roots.emplace(off, std::string(essential));
        if (enumerators.count(essential))
            named.enumerators.emplace(off, std::string(essential));
    });
    // Candidates of each root name: (id, kind).
    std::unordered_map<std::string, std::vector<std::pair<std::uint32_t, int>>> candidates;
    bool names_whole = true;
    kernel.scan_types([&](std::uint32_t id, const btf_type& t) {
        if (!t.name_off)
            return;
        if (t.name_off >= starts.size() || !starts[t.name_off])
            names_whole = false;
        auto it = named.roots.find(t.name_off);
        if (it != named.roots.end())
            candidates[it->second].emplace_back(id, btf_kind(&t));
    });
    if (!names_whole)
        throw Unsupported("the kernel's BTF names types from inside other strings");
    starts.clear();
    starts.shrink_to_fit();

    Cut cut(kernel, named);
    std::set<std::string_view> unmatched;
    for (const auto& r : relocations) {
        std::size_t matched = 0;
        for (auto [id, kind] : candidates[r.root_name]) {
            if (!kinds_core_compatible(kind, r.root_kind))
                continue;
            matched++;
            switch (r.kind) {
            case Relocation::Kind::field: cut.field(id, r.steps); break;
            case Relocation::Kind::type: cut.keep(id), cut.shape(id, true); break;
            case Relocation::Kind::enumerator: cut.enumerator(id, r.enumerator); break;
            }
        }
        if (!matched)
            unmatched.insert(r.root_name);
    }
    // libbpf would look in the modules' BTF for these: where none has the name, it finds
    // nothing there either, and the relocations fail (or say "does not exist") alike.
    for (std::string_view name : unmatched)
        if (module_may_have(file, name))
            throw Unsupported("no type " + std::string(name) + " in vmlinux, and a module's BTF names it");
    return {cut.write(), cut.kept(), kernel.type_count() - 1};
}

} // namespace

CoreBtf CoreBtf::for_object(const void* elf, std::size_t size, const std::filesystem::path& kernel_btf)
{
    CoreBtf result;
    try {
        auto relocations = object_relocations(find_sections(elf, size));
        if (relocations.empty())
            return result;
        auto [raw, types_kept, kernel_types] = cut(relocations, kernel_btf);
        // What libbpf will read must parse: else the whole BTF, as without this.
        std::unique_ptr<btf, void (*)(btf*)> check(btf__new(raw.data(), static_cast<__u32>(raw.size())),
                                                   &btf__free);
        if (!check)
            throw Unsupported("internal: libbpf does not read the cut BTF");
        int fd = memfd_create("tpkit-core-btf", MFD_CLOEXEC);
        if (fd < 0)
            throw Unsupported(std::string("memfd_create: ") + std::strerror(errno));
        result.fd_ = fd;
        for (std::size_t done = 0; done < raw.size();) {
            ssize_t n = write(fd, raw.data() + done, raw.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                throw Unsupported(std::string("writing the cut BTF: ") + std::strerror(errno));
            done += static_cast<std::size_t>(n);
        }
        result.path_ = "/proc/self/fd/" + std::to_string(fd);
        // libbpf opens it by that name: /proc must be there.
        if (access(result.path_.c_str(), R_OK))
            throw Unsupported(result.path_ + ": " + std::strerror(errno));
        result.types_kept_ = types_kept;
        result.kernel_types_ = kernel_types;
    } catch (const std::exception& e) {
        CoreBtf whole;
        whole.why_whole_ = e.what();
        return whole;
    }
    return result;
}

namespace {

// Calls seen(kernel, id, type) for each type of the kernel's BTF named NAME, in id order; a file
// that is no BTF is Error(unknown_target).
template <class Seen>
void each_type_named(const std::filesystem::path& file, std::string_view name, Seen seen)
{
    try {
        KernelBtf kernel(file);
        std::unordered_set<std::uint32_t> named;
        kernel.scan_strings([&](std::uint32_t off, std::string_view s) {
            if (s == name)
                named.insert(off);
        });
        kernel.scan_types([&](std::uint32_t id, const btf_type& t) {
            if (named.count(t.name_off))
                seen(kernel, id, t);
        });
    } catch (const Unsupported& e) {
        throw Error(Exit::unknown_target, std::string("cannot read the kernel's BTF: ") + e.what());
    }
}

} // namespace

bool kernel_btf_has_type(std::string_view name, int kind, const std::filesystem::path& kernel_btf)
{
    bool found = false;
    each_type_named(kernel_btf, name, [&](KernelBtf&, std::uint32_t, const btf_type& t) {
        found = found || btf_kind(&t) == kind;
    });
    return found;
}

std::optional<std::map<std::int64_t, std::string>> kernel_enum_values(std::string_view name,
                                                                    const std::filesystem::path& kernel_btf)
{
    std::optional<std::map<std::int64_t, std::string>> values;
    bool from_enum32 = false;
    each_type_named(kernel_btf, name, [&](KernelBtf& kernel, std::uint32_t id, const btf_type& type) {
        bool enum32 = btf_kind(&type) == BTF_KIND_ENUM;
        if ((!enum32 && btf_kind(&type) != BTF_KIND_ENUM64) || from_enum32 || (values && !enum32))
            return; // the first enum of 32 bits, else the first of 64
        const btf_type* t = kernel.type(id);
        std::vector<std::pair<std::int64_t, std::uint32_t>> enumerators;
        for (std::uint32_t i = 0; i < btf_vlen(t); i++)
            enumerators.emplace_back(enum32 ? btf_enum(t)[i].val
                                            : static_cast<std::int64_t>(btf_enum64_value(btf_enum64(t) + i)),
                                     enum32 ? btf_enum(t)[i].name_off : btf_enum64(t)[i].name_off);
        values.emplace();
        for (const auto& [value, name_off] : enumerators)
            values->emplace(value, kernel.name(name_off));
        from_enum32 = enum32;
    });
    return values;
}

CoreBtf::CoreBtf(CoreBtf&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)),
      why_whole_(std::move(other.why_whole_)), types_kept_(other.types_kept_),
      kernel_types_(other.kernel_types_)
{
}

CoreBtf& CoreBtf::operator=(CoreBtf&& other) noexcept
{
    if (this != &other) {
        if (fd_ >= 0)
            close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        path_ = std::move(other.path_);
        why_whole_ = std::move(other.why_whole_);
        types_kept_ = other.types_kept_;
        kernel_types_ = other.kernel_types_;
    }
    return *this;
}

CoreBtf::~CoreBtf()
{
    if (fd_ >= 0)
        close(fd_);
}

} // namespace tpkit
