// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The kernel's BTF cut down to what one BPF object's CO-RE relocations look at, for libbpf's
// btf_custom_path. libbpf 1.1 relocates against the whole of /sys/kernel/btf/vmlinux: it reads
// the file and copies it (2 × 5.5 MB on 6.18), most of a CO-RE tool's peak memory. This reads
// the file in pieces instead and keeps, of every type a relocation can match, the parts
// libbpf's matching reads: the members named along each access path (and the anonymous
// structs and unions that hold them), sizes, the types of the fields read, the enumerators
// named. Relocated instructions are the same as with the whole BTF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tpkit {

class CoreBtf {
public:
    // For the BPF object (ELF) in [elf, elf + size). Never throws: when the object has no CO-RE
    // relocation, or holds one this does not cut for (why_whole() says which), path() is
    // nullptr and libbpf reads the kernel's whole BTF as it would without this.
    static CoreBtf for_object(const void* elf, std::size_t size,
                              const std::filesystem::path& kernel_btf = "/sys/kernel/btf/vmlinux");

    CoreBtf() = default;
    CoreBtf(CoreBtf&& other) noexcept;
    CoreBtf& operator=(CoreBtf&& other) noexcept;
    CoreBtf(const CoreBtf&) = delete;
    CoreBtf& operator=(const CoreBtf&) = delete;
    ~CoreBtf();

    // "/proc/self/fd/N" of a memfd holding the raw BTF, for bpf_object_open_opts, or nullptr.
    const char* path() const { return fd_ < 0 ? nullptr : path_.c_str(); }
    // Why the whole BTF is needed; empty when it is not, or when nothing is.
    const std::string& why_whole() const { return why_whole_; }
    // Types kept, of the kernel's (for -v and the benchmarks).
    std::size_t types_kept() const { return types_kept_; }
    std::size_t kernel_types() const { return kernel_types_; }

private:
    int fd_ = -1;
    std::string path_;
    std::string why_whole_;
    std::size_t types_kept_ = 0;
    std::size_t kernel_types_ = 0;
};

// Whether the kernel's BTF has a type NAME of KIND (BTF_KIND_*), read in pieces as
// CoreBtf::for_object() reads it rather than held whole. Error(unknown_target) when the file
// cannot be read as BTF.
bool kernel_btf_has_type(std::string_view name, int kind,
                         const std::filesystem::path& kernel_btf = "/sys/kernel/btf/vmlinux");

// The enumerators of the kernel's enum NAME (value → name; the first enum of that name, of 32
// bits before 64), or nothing when it has none; read as kernel_btf_has_type() reads.
std::optional<std::map<std::int64_t, std::string>>
kernel_enum_values(std::string_view name, const std::filesystem::path& kernel_btf = "/sys/kernel/btf/vmlinux");

} // namespace tpkit
