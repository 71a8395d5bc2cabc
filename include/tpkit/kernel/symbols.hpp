// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Addresses to function names: kernel addresses from /proc/kallsyms, a process's addresses from
// the ELF symbol tables (.symtab and .dynsym) of the files it maps, as /proc/PID/maps lists them.
// For stacks (offcputime) and function pointers (wqlat's work functions).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpkit {

// Where an address lies: in function `name`, `offset` bytes from its start. `module` is the
// kernel module ("ext4", empty for the kernel image) or the file a process maps ("/usr/lib/…").
// A user address inside a mapped file with no symbol for it has an empty name, and `offset` is
// then its offset in the file.
struct Symbol {
    std::string name;
    std::uint64_t offset = 0;
    std::string module;
    // Bytes from its start to the next function's (kernel functions only; 0 when last): what the
    // kernel's %pS prints after the offset.
    std::uint64_t size = 0;
};

// How stacks print a frame: "name", or "name+0x1a" with offsets; "[libc.so.6+0x1234]" for a
// place in a file without a symbol for it; "[unknown]" when nothing is known.
std::string frame_text(const std::optional<Symbol>& symbol, bool with_offset);

// The kernel's functions, sorted by address for binary search.
class KernelSymbols {
public:
    // Reads a file in /proc/kallsyms's format ("ffffffff81000000 T _stext", module functions
    // ending in "\t[ext4]"); only functions (types t, T, w, W) are kept. Error(failure) when it
    // cannot be read; Error(no_privileges) when every address reads 0 (kptr_restrict hides them
    // from this user).
    explicit KernelSymbols(const std::filesystem::path& kallsyms = "/proc/kallsyms");

    // The function an address lies in, named as the kernel's %pS names it (kallsyms_lookup):
    // the one starting last at or before it, and of several names at that address (aliases:
    // __do_sys_vfork, __ia32_sys_vfork, __x64_sys_vfork), the first the file lists. The kernel
    // looks the address up so in its own table, which /proc/kallsyms lists in order (a
    // module's symbols in its symbol table's order, where the kernel also takes the first).
    std::optional<Symbol> find(std::uint64_t address) const;
    // The function a return address (a frame of a stack walk) was called from, as the kernel's
    // own stack traces name frames (%pB: /proc/PID/stack, oopses): the one holding the byte
    // before it, with the offset of the address itself. A call that never returns ends its
    // function, so its return address is where the next function's padding (__pfx_NEXT with
    // CONFIG_FUNCTION_PADDING) or the next function begins, which %pS would name.
    std::optional<Symbol> find_return_address(std::uint64_t address) const;
    // Start addresses of the functions named `name` (static functions of one name in several
    // files have several), in address order.
    std::vector<std::uint64_t> addresses_of(std::string_view name) const;
    std::size_t size() const { return entries_.size(); }

private:
    // 16 bytes a function (there are 120k on 6.18), in a deque: /proc/kallsyms cannot be sized
    // before it is read, and a vector doubling as it grows holds the old and the new at once.
    struct Entry {
        std::uint64_t address;
        std::uint32_t name;   // name_at(name), NUL-terminated
        std::uint16_t module; // in modules_ ("" for the kernel image)
    };
    static constexpr unsigned name_block_bits = 18;
    const char* name_at(std::uint32_t name) const
    {
        return name_blocks_[name >> name_block_bits].get() + (name & ((1u << name_block_bits) - 1));
    }
    std::deque<Entry> entries_;
    // The names, in blocks of 256 KiB filled one after the other (no copy as they grow).
    std::vector<std::unique_ptr<char[]>> name_blocks_;
    std::vector<std::string> modules_;
};

// /proc/kallsyms read on a thread of its own from construction on (the kernel takes tens of
// milliseconds to list it), for a tool that needs it only to print: take() waits for it, and
// throws what reading it threw. The thread keeps the capabilities the tool had when it started:
// start it before dropping them.
class KernelSymbolsInBackground {
public:
    KernelSymbolsInBackground();
    KernelSymbols take();

private:
    std::future<KernelSymbols> reading_;
};

// The address a kallsyms-format file lists for a symbol of this name, of any type (data too),
// or nothing when it lists none (kernels built without CONFIG_KALLSYMS_ALL list functions only);
// 0 when kptr_restrict hides the addresses from this user.
std::optional<std::uint64_t> kernel_symbol_address(std::string_view name,
                                                   const std::filesystem::path& kallsyms = "/proc/kallsyms");

// The functions of one ELF file (.symtab and .dynsym, C++ names demangled) and its loadable
// segments, which say where a file offset is in the file's own addresses.
class ElfSymbols {
public:
    // Error(failure) when the file cannot be opened or is no ELF file.
    explicit ElfSymbols(const std::filesystem::path& path);

    // The function at virtual address `vaddr`, in the file's own (link-time) addresses.
    std::optional<Symbol> find_vaddr(std::uint64_t vaddr) const;
    // The function at `offset` bytes into the file, where a mapping of the file puts it: the
    // same for an executable at a fixed address and a PIE or library at any load address.
    std::optional<Symbol> find_file_offset(std::uint64_t offset) const;
    std::size_t size() const { return functions_.size(); }

private:
    struct Function {
        std::uint64_t start, size;
        std::string name;
        int rank;
    };
    struct Segment {
        std::uint64_t offset, vaddr, size;
    };
    std::vector<Function> functions_;
    std::vector<Segment> segments_;
};

// A process's functions: its executable mappings (/proc/PID/maps, read once per process) and
// each mapped file's symbols (read once per file, shared by every process that maps it). Files
// are opened through /proc/PID/root, so processes in other mount namespaces resolve too.
class UserSymbols {
public:
    // nullopt when the process is gone or the address is in no executable file mapping.
    std::optional<Symbol> find(pid_t pid, std::uint64_t address);
    // Reads the process's mappings again at its next find() (after an exec, a dlopen).
    void forget(pid_t pid) { processes_.erase(pid); }

private:
    struct Mapping {
        std::uint64_t start, end, offset;
        std::string path;
        std::shared_ptr<const ElfSymbols> file; // null: not an ELF file we could read
    };
    const std::vector<Mapping>& mappings_of(pid_t pid);
    // The symbols of the file at `path` whose device and inode are `id`, read once.
    std::shared_ptr<const ElfSymbols> file(const std::string& path, const std::string& id);

    std::map<pid_t, std::vector<Mapping>> processes_;
    std::map<std::string, std::shared_ptr<const ElfSymbols>> files_; // by "device inode"
};

} // namespace tpkit
