// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The cut kernel BTF (core_btf.hpp) against the whole one: every tool's BPF object is loaded
// twice on this kernel, once relocated against each, and libbpf must patch every instruction
// the same way (its log of each patch: instruction, old and new value, or the poisoning).
#include "live.hpp"
#include "tool_objects.hpp"

#include "tpkit/kernel/core_btf.hpp"

#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

std::vector<std::string>* captured = nullptr;

int capture_libbpf(enum libbpf_print_level, const char* format, va_list args)
{
    char line[1024];
    std::vsnprintf(line, sizeof(line), format, args);
    std::string text(line);
    // "prog 'x': relo #3: patched insn #12 (LDX/ST/STX) off 8 -> 16", "… substituting insn #7
    // w/ invalid insn": what a relocation did, free of the type ids of either BTF.
    if (captured && text.find(": relo #") != std::string::npos &&
        (text.find("patched insn") != std::string::npos || text.find("substituting insn") != std::string::npos))
        captured->push_back(text);
    return 0;
}

// libbpf's record of the patches made to OBJECT's instructions when relocated against
// BTF_PATH (nullptr: the kernel's whole BTF).
std::vector<std::string> patches(const tpkit::live::ToolObject& object, const char* btf_path)
{
    std::size_t size = 0;
    const void* elf = object.elf_bytes(&size);
    bpf_object_open_opts opts{};
    opts.sz = sizeof(opts);
    opts.object_name = object.tool;
    opts.btf_custom_path = btf_path;
    std::unique_ptr<bpf_object, void (*)(bpf_object*)> obj(bpf_object__open_mem(elf, size, &opts),
                                                            &bpf_object__close);
    if (!obj) {
        ADD_FAILURE() << object.tool << ": cannot open its object";
        return {};
    }
    // Maps the tool sizes at run time get a size: libbpf creates the maps before relocating.
    // (Local storage has none; libbpf sizes a perf event array itself.)
    bpf_map* map = nullptr;
    while ((map = bpf_object__next_map(obj.get(), map))) {
        switch (bpf_map__type(map)) {
        case BPF_MAP_TYPE_TASK_STORAGE:
        case BPF_MAP_TYPE_SK_STORAGE:
        case BPF_MAP_TYPE_INODE_STORAGE:
        case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
            break;
        default:
            if (bpf_map__max_entries(map) == 0)
                bpf_map__set_max_entries(map, bpf_map__type(map) == BPF_MAP_TYPE_RINGBUF ? 4096 : 1);
        }
    }
    std::vector<std::string> lines;
    captured = &lines;
    libbpf_print_fn_t previous = libbpf_set_print(capture_libbpf);
    // Programs whose rodata the tool would set may not pass the verifier: the patches are
    // made before the programs are loaded, whatever the verifier says.
    (void)bpf_object__load(obj.get());
    libbpf_set_print(previous);
    captured = nullptr;
    return lines;
}

} // namespace

TEST(CoreBtfExact, EveryToolObjectRelocatesAsAgainstTheWholeBtf)
{
    TPKIT_REQUIRE_LIVE();
    for (const auto& object : tpkit::live::tool_objects) {
        std::size_t size = 0;
        const void* elf = object.elf_bytes(&size);
        auto core_btf = tpkit::CoreBtf::for_object(elf, size);
        if (!core_btf.path() && core_btf.why_whole().empty())
            continue; // no CO-RE relocation (the engines: their records come from format files)
        if (!core_btf.path()) {
            ADD_FAILURE() << object.tool << ": no cut BTF: " << core_btf.why_whole();
            continue;
        }
        constexpr std::size_t times_fewer = 50; // types kept than the kernel has, at least
        EXPECT_LT(core_btf.types_kept() * times_fewer, core_btf.kernel_types()) << object.tool;
        auto whole = patches(object, nullptr);
        auto cut = patches(object, core_btf.path());
        EXPECT_FALSE(whole.empty()) << object.tool << ": libbpf patched nothing";
        EXPECT_EQ(cut, whole) << object.tool;
    }
}
