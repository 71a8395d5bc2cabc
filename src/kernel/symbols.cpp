// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/kernel/symbols.hpp"

#include "tpkit/support/error.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <fmt/core.h>
#include <fstream>
#include <sstream>
#include <tuple>

namespace tpkit {
namespace {

// Among names of one address in an ELF file, the one shown: the one with fewer leading
// underscores, the name callers use (glibc exports getpid weak and __getpid global), then global
// before weak before local. (The kernel's are chosen as the kernel chooses: KernelSymbols.)
int name_rank(int binding_rank, std::string_view name)
{
    std::size_t underscores = std::min<std::size_t>(name.find_first_not_of('_'), 3);
    return static_cast<int>(underscores) * 3 + binding_rank;
}

// C++ names as people write them; other names unchanged.
std::string demangled(const std::string& name)
{
    if (name.rfind("_Z", 0) != 0)
        return name;
    int status = 0;
    char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (!text)
        return name;
    std::string result(text);
    std::free(text);
    return result;
}

// The last element of a range sorted by address that starts at or before `address`, moved back
// to the first element of that address (the name shown); `end` when none does.
template <class It, class StartOf>
It first_at_or_before(It begin, It end, std::uint64_t address, StartOf start_of)
{
    It it = std::upper_bound(begin, end, address,
                             [&](std::uint64_t a, const auto& e) { return a < start_of(e); });
    if (it == begin)
        return end;
    --it;
    while (it != begin && start_of(*std::prev(it)) == start_of(*it))
        --it;
    return it;
}

class ElfHandle {
public:
    explicit ElfHandle(const std::filesystem::path& path)
    {
        if (elf_version(EV_CURRENT) == EV_NONE)
            throw Error(Exit::failure, "libelf: " + std::string(elf_errmsg(-1)));
        fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0)
            throw Error(Exit::failure,
                        fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
        elf_ = elf_begin(fd_, ELF_C_READ_MMAP, nullptr);
        if (!elf_ || elf_kind(elf_) != ELF_K_ELF) {
            close_all();
            throw Error(Exit::failure, fmt::format("{}: not an ELF file", path.string()));
        }
    }
    ~ElfHandle() { close_all(); }
    ElfHandle(const ElfHandle&) = delete;
    ElfHandle& operator=(const ElfHandle&) = delete;
    Elf* get() const { return elf_; }

private:
    void close_all()
    {
        if (elf_)
            elf_end(elf_);
        if (fd_ >= 0)
            close(fd_);
        elf_ = nullptr;
        fd_ = -1;
    }
    int fd_ = -1;
    Elf* elf_ = nullptr;
};

} // namespace

std::string frame_text(const std::optional<Symbol>& symbol, bool with_offset)
{
    if (!symbol)
        return "[unknown]";
    if (symbol->name.empty())
        return fmt::format("[{}+0x{:x}]", std::filesystem::path(symbol->module).filename().string(),
                           symbol->offset);
    if (with_offset)
        return fmt::format("{}+0x{:x}", symbol->name, symbol->offset);
    return symbol->name;
}

// ---- kernel ----

std::optional<std::uint64_t> kernel_symbol_address(std::string_view name, const std::filesystem::path& kallsyms)
{
    std::ifstream in(kallsyms);
    std::string line;
    while (std::getline(in, line)) {
        // "ffffffff82000000 D jiffies", a module's symbols followed by "\t[ext4]"
        auto type = line.find(' ');
        if (type == std::string::npos || line.size() < type + 3 || line[type + 2] != ' ')
            continue;
        std::string_view symbol = std::string_view(line).substr(type + 3);
        if (symbol.substr(0, symbol.find('\t')) == name)
            return std::strtoull(line.c_str(), nullptr, 16);
    }
    return std::nullopt;
}

KernelSymbols::KernelSymbols(const std::filesystem::path& kallsyms)
{
    std::ifstream in(kallsyms);
    if (!in)
        throw Error(Exit::failure,
                    fmt::format("cannot read {}: {}", kallsyms.string(), std::strerror(errno)));
    std::map<std::string, std::uint16_t, std::less<>> modules{{"", 0}};
    modules_.emplace_back();
    constexpr std::size_t block_size = std::size_t(1) << name_block_bits;
    std::size_t block_used = block_size;
    bool any_address = false;
    std::string line;
    while (std::getline(in, line)) {
        // "ffffffff81000000 T _stext" or "ffffffffc0a01000 t ext4_fill_super\t[ext4]"
        char* end = nullptr;
        std::uint64_t address = std::strtoull(line.c_str(), &end, 16);
        if (end == line.c_str() || end + 3 > line.c_str() + line.size() || end[0] != ' ' || end[2] != ' ')
            continue;
        char type = end[1];
        if (type != 't' && type != 'T' && type != 'w' && type != 'W')
            continue;
        any_address |= address != 0;
        std::string_view rest(end + 3);
        std::string_view module;
        if (auto tab = rest.find('\t'); tab != std::string_view::npos) {
            module = rest.substr(tab + 1);
            rest = rest.substr(0, tab);
            if (module.size() >= 2 && module.front() == '[' && module.back() == ']')
                module = module.substr(1, module.size() - 2);
        }
        if (rest.empty() || rest.size() >= block_size)
            continue;
        auto [it, inserted] = modules.try_emplace(std::string(module), std::uint16_t(modules_.size()));
        if (inserted) {
            if (modules_.size() > UINT16_MAX)
                throw Error(Exit::failure, fmt::format("{} lists more modules than expected", kallsyms.string()));
            modules_.emplace_back(module);
        }
        if (block_used + rest.size() + 1 > block_size) {
            name_blocks_.push_back(std::make_unique<char[]>(block_size));
            block_used = 0;
        }
        char* name = name_blocks_.back().get() + block_used;
        std::memcpy(name, rest.data(), rest.size());
        name[rest.size()] = '\0';
        auto name_ref = std::uint32_t(((name_blocks_.size() - 1) << name_block_bits) | block_used);
        entries_.push_back({address, name_ref, it->second});
        block_used += rest.size() + 1;
    }
    if (!entries_.empty() && !any_address)
        throw Error(Exit::no_privileges,
                    fmt::format("{} shows every address as 0 (kptr_restrict): kernel symbols need "
                                "root or CAP_SYSLOG",
                                kallsyms.string()));
    // Names are stored in the file's order, so their references keep it among the names of one
    // address (the first is the one shown): a sort in place, without stable_sort's buffer of
    // half the entries.
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
        return std::tie(a.address, a.name) < std::tie(b.address, b.name);
    });
}

KernelSymbolsInBackground::KernelSymbolsInBackground()
    : reading_(std::async(std::launch::async, [] { return KernelSymbols(); }))
{
}

KernelSymbols KernelSymbolsInBackground::take() { return reading_.get(); }

std::optional<Symbol> KernelSymbols::find(std::uint64_t address) const
{
    auto it = first_at_or_before(entries_.begin(), entries_.end(), address,
                                 [](const Entry& e) { return e.address; });
    if (it == entries_.end())
        return std::nullopt;
    Symbol symbol{name_at(it->name), address - it->address, modules_[it->module]};
    auto next = std::find_if(it, entries_.end(), [&](const Entry& e) { return e.address != it->address; });
    if (next != entries_.end())
        symbol.size = next->address - it->address;
    return symbol;
}

std::optional<Symbol> KernelSymbols::find_return_address(std::uint64_t address) const
{
    if (address == 0)
        return std::nullopt;
    auto symbol = find(address - 1);
    if (symbol)
        symbol->offset++;
    return symbol;
}

std::vector<std::uint64_t> KernelSymbols::addresses_of(std::string_view name) const
{
    std::vector<std::uint64_t> addresses;
    for (const Entry& e : entries_)
        if (name == name_at(e.name) &&
            (addresses.empty() || addresses.back() != e.address))
            addresses.push_back(e.address);
    return addresses;
}

// ---- one ELF file ----

ElfSymbols::ElfSymbols(const std::filesystem::path& path)
{
    ElfHandle elf(path);
    std::size_t headers = 0;
    if (elf_getphdrnum(elf.get(), &headers) == 0) {
        for (std::size_t i = 0; i < headers; i++) {
            GElf_Phdr ph{};
            if (gelf_getphdr(elf.get(), int(i), &ph) && ph.p_type == PT_LOAD && ph.p_filesz)
                segments_.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
        }
    }
    for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn; scn = elf_nextscn(elf.get(), scn)) {
        GElf_Shdr sh{};
        if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
            !sh.sh_entsize)
            continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (!data)
            continue;
        for (std::size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; i++) {
            GElf_Sym sym{};
            if (!gelf_getsym(data, int(i), &sym))
                break;
            int type = GELF_ST_TYPE(sym.st_info);
            if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
                sym.st_value == 0)
                continue;
            const char* name = elf_strptr(elf.get(), sh.sh_link, sym.st_name);
            if (!name || !*name)
                continue;
            int bind = GELF_ST_BIND(sym.st_info);
            int binding = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
            functions_.push_back({sym.st_value, sym.st_size, name, name_rank(binding, name)});
        }
    }
    // .dynsym repeats what .symtab has: keep one of each.
    std::sort(functions_.begin(), functions_.end(), [](const Function& a, const Function& b) {
        return std::tie(a.start, a.rank, a.name) < std::tie(b.start, b.rank, b.name);
    });
    functions_.erase(std::unique(functions_.begin(), functions_.end(),
                                 [](const Function& a, const Function& b) {
                                     return a.start == b.start && a.name == b.name;
                                 }),
                     functions_.end());
}

std::optional<Symbol> ElfSymbols::find_vaddr(std::uint64_t vaddr) const
{
    auto start_of = [](const Function& f) { return f.start; };
    auto group = first_at_or_before(functions_.begin(), functions_.end(), vaddr, start_of);
    // The nearest function before vaddr, unless its size says vaddr is past its end; then a
    // larger function that starts earlier may still hold it (a local label inside a function).
    for (int groups = 0; group != functions_.end() && groups < 16; groups++) {
        for (auto f = group; f != functions_.end() && f->start == group->start; ++f)
            if (vaddr < f->start + f->size || (f->size == 0 && groups == 0))
                return Symbol{demangled(f->name), vaddr - f->start, {}};
        auto earlier = first_at_or_before(functions_.begin(), group, group->start - 1, start_of);
        if (earlier == group)
            break;
        group = earlier;
    }
    return std::nullopt;
}

std::optional<Symbol> ElfSymbols::find_file_offset(std::uint64_t offset) const
{
    for (const Segment& s : segments_)
        if (offset >= s.offset && offset - s.offset < s.size)
            return find_vaddr(s.vaddr + (offset - s.offset));
    return std::nullopt;
}

// ---- a process ----

std::optional<Symbol> UserSymbols::find(pid_t pid, std::uint64_t address)
{
    for (const Mapping& m : mappings_of(pid)) {
        if (address < m.start || address >= m.end)
            continue;
        const std::uint64_t offset = address - m.start + m.offset;
        std::optional<Symbol> symbol;
        if (m.file)
            symbol = m.file->find_file_offset(offset);
        if (!symbol)
            symbol = Symbol{"", offset, m.path};
        symbol->module = m.path;
        return symbol;
    }
    return std::nullopt;
}

const std::vector<UserSymbols::Mapping>& UserSymbols::mappings_of(pid_t pid)
{
    if (auto it = processes_.find(pid); it != processes_.end())
        return it->second;
    std::vector<Mapping> mappings;
    std::ifstream maps(fmt::format("/proc/{}/maps", pid));
    std::string line;
    while (std::getline(maps, line)) {
        // "55d0c8a00000-55d0c8a21000 r-xp 00002000 fe:01 1234567   /usr/bin/cat"
        std::istringstream fields(line);
        std::string range, perms, offset, device, path;
        std::uint64_t inode = 0;
        if (!(fields >> range >> perms >> offset >> device >> inode) || perms.find('x') == std::string::npos)
            continue;
        std::getline(fields >> std::ws, path);
        auto dash = range.find('-');
        if (inode == 0 || path.empty() || path[0] != '/' || dash == std::string::npos)
            continue;
        Mapping m{std::strtoull(range.c_str(), nullptr, 16),
                  std::strtoull(range.c_str() + dash + 1, nullptr, 16),
                  std::strtoull(offset.c_str(), nullptr, 16), path, nullptr};
        // A file deleted since it was mapped is still reachable through map_files.
        constexpr std::string_view deleted = " (deleted)";
        std::string open_path = fmt::format("/proc/{}/root{}", pid, path);
        if (path.size() > deleted.size() && path.ends_with(deleted)) {
            m.path.resize(path.size() - deleted.size());
            open_path = fmt::format("/proc/{}/map_files/{}", pid, range);
        }
        m.file = file(open_path, device + ' ' + std::to_string(inode));
        mappings.push_back(std::move(m));
    }
    return processes_[pid] = std::move(mappings);
}

std::shared_ptr<const ElfSymbols> UserSymbols::file(const std::string& path, const std::string& id)
{
    auto it = files_.find(id);
    if (it != files_.end())
        return it->second;
    std::shared_ptr<const ElfSymbols> symbols;
    try {
        symbols = std::make_shared<const ElfSymbols>(path);
    } catch (const Error&) {
        // Not readable or not ELF: its addresses show as file offsets; asked once per file.
    }
    return files_[id] = symbols;
}

} // namespace tpkit
