// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The symbolizer on known addresses: functions of this test binary (a PIE, so its load bias
// matters) and of the C library it maps, and a kallsyms-format fixture for the kernel side.
#include "scratch.hpp"

#include <tpkit/kernel/symbols.hpp>
#include <tpkit/support/error.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>

extern "C" {
// Known functions at known addresses: noinline and used, so each is a real function with a
// symbol of its own.
__attribute__((noinline, used)) int tpk_symbols_probe(int x)
{
    asm volatile("" ::: "memory");
    return x * 3 + 1;
}
__attribute__((noinline, used)) int tpk_symbols_other(int x)
{
    asm volatile("" ::: "memory");
    return x * 5 + 2;
}
}

namespace tpkit_symbols_test {
__attribute__((noinline, used)) int scoped_probe(int x)
{
    asm volatile("" ::: "memory");
    return x - 7;
}
} // namespace tpkit_symbols_test

namespace {

using tpkit::KernelSymbols;
using tpkit::Symbol;
using tpkit::UserSymbols;

std::uint64_t address_of(int (*f)(int)) { return reinterpret_cast<std::uint64_t>(f); }

const std::string kallsyms_fixture = std::string(TPKIT_TEST_DATA) + "/symbols/kallsyms";

TEST(KernelSymbols, FindsTheFunctionAndOffset)
{
    KernelSymbols ksyms(kallsyms_fixture);
    auto s = ksyms.find(0xffffffff810a1f10);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->name, "hrtimer_nanosleep");
    EXPECT_EQ(s->offset, 0u);
    EXPECT_EQ(s->module, "");
    s = ksyms.find(0xffffffff810a1f10 + 0x4a);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->name, "hrtimer_nanosleep");
    EXPECT_EQ(s->offset, 0x4au);
    EXPECT_EQ(tpkit::frame_text(s, true), "hrtimer_nanosleep+0x4a");
    EXPECT_EQ(tpkit::frame_text(s, false), "hrtimer_nanosleep");
    // The lines were not sorted: __x64_sys_nanosleep_time32 sits between two earlier lines.
    s = ksyms.find(0xffffffff810a2123);
    ASSERT_TRUE(s);
    EXPECT_EQ(tpkit::frame_text(s, true), "__x64_sys_nanosleep_time32+0x23");
    s = ksyms.find(0xffffffff810a20ff);
    ASSERT_TRUE(s);
    EXPECT_EQ(tpkit::frame_text(s, true), "__x64_sys_nanosleep+0xff");
    // The padding before a function is its own symbol.
    EXPECT_EQ(tpkit::frame_text(ksyms.find(0xffffffff810a1f0f), true), "__pfx_hrtimer_nanosleep+0xf");
}

TEST(KernelSymbols, KeepsFunctionsOnlyAndNamesAnAddressByItsFirstName)
{
    KernelSymbols ksyms(kallsyms_fixture);
    // 14 text symbols (t, T, W); the A, D and b lines and the malformed one are left out.
    EXPECT_EQ(ksyms.size(), 14u);
    // _stext and startup_64 share an address: the first listed is shown, as the kernel shows it.
    EXPECT_EQ(tpkit::frame_text(ksyms.find(0xffffffff81000010), true), "_stext+0x10");
    // jiffies (data) is no function: the address belongs to the last function before it.
    EXPECT_EQ(tpkit::frame_text(ksyms.find(0xffffffff82000000), false), "do_nanosleep");
    // Before the first function nothing is known (the absolute per-CPU symbol at 0 is skipped).
    EXPECT_FALSE(ksyms.find(0x1000));
    EXPECT_FALSE(ksyms.find(0xffffffff80ffffff));
    EXPECT_EQ(tpkit::frame_text(ksyms.find(0x1000), true), "[unknown]");
}

// Lines of 6.18's /proc/kallsyms: three names of one vfork function, each after its padding.
const std::string kallsyms_6_18 = std::string(TPKIT_TEST_DATA) + "/symbols/kallsyms-6.18";

TEST(KernelSymbols, AliasesAreNamedAsTheKernelNamesThem)
{
    KernelSymbols ksyms(kallsyms_6_18);
    // 6.18's /proc/PID/stack of a task waiting in vfork(): "__do_sys_vfork+0x66/0x90".
    auto s = ksyms.find_return_address(0xffffffff8135fdc0 + 0x66);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->name, "__do_sys_vfork");
    EXPECT_EQ(s->offset, 0x66u);
    EXPECT_EQ(s->size, 0x90u);
    EXPECT_EQ(tpkit::frame_text(ksyms.find(0xffffffff8135fd20 + 0x10), true), "__do_sys_fork+0x10");

    // The file's order decides, not the names: listed first, __x64_sys_vfork is the one shown.
    auto path = tpkit::test::scratch_dir("tpkit-symbols") / "kallsyms-x64-first";
    std::ofstream(path) << "ffffffff8135fdb0 T __pfx___x64_sys_vfork\n"
                           "ffffffff8135fdc0 T __x64_sys_vfork\n"
                           "ffffffff8135fdc0 T __ia32_sys_vfork\n"
                           "ffffffff8135fdc0 t __do_sys_vfork\n"
                           "ffffffff8135fe50 T __pfx___x64_sys_clone\n";
    EXPECT_EQ(tpkit::frame_text(KernelSymbols(path).find_return_address(0xffffffff8135fdc0 + 0x66), true),
              "__x64_sys_vfork+0x66");
}

TEST(KernelSymbols, AReturnAddressIsNamedByTheCallBeforeIt)
{
    KernelSymbols ksyms(kallsyms_6_18);
    // x86_64_start_reservations ends with its call of start_kernel, which never returns: the
    // return address is where clear_bss's padding begins, and the call is in the function
    // before (the kernel's backtrace says "x86_64_start_reservations+0x20/0x20").
    auto s = ksyms.find_return_address(0xffffffff8378d8c0);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->name, "x86_64_start_reservations");
    EXPECT_EQ(s->offset, 0x20u);
    EXPECT_EQ(s->size, 0x20u);
    // %pS on the address itself names the padding; nothing in a stack walk is there.
    EXPECT_EQ(ksyms.find(0xffffffff8378d8c0)->name, "__pfx_clear_bss");
    // Inside a function, both name it alike.
    EXPECT_EQ(tpkit::frame_text(ksyms.find_return_address(0xffffffff8378d8d0 + 0x35), true), "clear_bss+0x35");
    EXPECT_EQ(tpkit::frame_text(ksyms.find(0xffffffff8378d8d0 + 0x35), true), "clear_bss+0x35");
    // Before the first function, and 0 (no frame), nothing is known.
    EXPECT_FALSE(ksyms.find_return_address(0xffffffff81000000));
    EXPECT_FALSE(ksyms.find_return_address(0));
}

TEST(KernelSymbols, ListsDataSymbolsByName)
{
    EXPECT_EQ(tpkit::kernel_symbol_address("jiffies", kallsyms_fixture), 0xffffffff82000000);      // D
    EXPECT_EQ(tpkit::kernel_symbol_address("sleep_state", kallsyms_fixture), 0xffffffff82600000);  // b
    EXPECT_EQ(tpkit::kernel_symbol_address("ext4_sync_fs", kallsyms_fixture), 0xffffffffc0a01400); // a module's
    EXPECT_FALSE(tpkit::kernel_symbol_address("jiff", kallsyms_fixture));
    EXPECT_FALSE(tpkit::kernel_symbol_address("vm_zone_stat", kallsyms_fixture));
    EXPECT_FALSE(tpkit::kernel_symbol_address("jiffies", "/nonexistent/kallsyms"));
}

TEST(KernelSymbols, ModulesAndNamesToAddresses)
{
    KernelSymbols ksyms(kallsyms_fixture);
    auto s = ksyms.find(0xffffffffc0a01404);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->name, "ext4_sync_fs");
    EXPECT_EQ(s->offset, 4u);
    EXPECT_EQ(s->module, "ext4");
    EXPECT_EQ(ksyms.find(0xffffffffc0b00000)->module, "loop");
    // A static function of one name in two files has two addresses.
    EXPECT_EQ(ksyms.addresses_of("refresh_vm_stats"),
              (std::vector<std::uint64_t>{0xffffffff81300000, 0xffffffff81400000}));
    EXPECT_EQ(ksyms.addresses_of("ext4_fill_super"), std::vector<std::uint64_t>{0xffffffffc0a01000});
    EXPECT_TRUE(ksyms.addresses_of("jiffies").empty());
    EXPECT_TRUE(ksyms.addresses_of("no_such_function").empty());
}

TEST(KernelSymbols, HiddenAddressesAreAPrivilegeError)
{
    auto path = tpkit::test::scratch_dir("tpkit-symbols") / "kallsyms-hidden";
    std::ofstream(path) << "0000000000000000 T _stext\n0000000000000000 t schedule\n";
    try {
        KernelSymbols ksyms(path);
        FAIL() << "accepted a kallsyms whose addresses are all hidden";
    } catch (const tpkit::Error& e) {
        EXPECT_EQ(e.code(), tpkit::Exit::no_privileges);
        EXPECT_NE(std::string(e.what()).find("kptr_restrict"), std::string::npos) << e.what();
    }
    try {
        KernelSymbols ksyms(path.string() + "-missing");
        FAIL() << "read a file that does not exist";
    } catch (const tpkit::Error& e) {
        EXPECT_EQ(e.code(), tpkit::Exit::failure);
    }
}

TEST(UserSymbols, FunctionsOfThisPieBinaryByAddress)
{
    UserSymbols syms;
    const std::uint64_t probe = address_of(&tpk_symbols_probe);
    auto s = syms.find(getpid(), probe);
    ASSERT_TRUE(s) << "no mapping holds " << std::hex << probe;
    EXPECT_EQ(s->name, "tpk_symbols_probe");
    EXPECT_EQ(s->offset, 0u);
    EXPECT_EQ(s->module, std::filesystem::read_symlink("/proc/self/exe").string());
    // Inside the function: the same name, the offset from its start.
    s = syms.find(getpid(), probe + 2);
    ASSERT_TRUE(s);
    EXPECT_EQ(tpkit::frame_text(s, true), "tpk_symbols_probe+0x2");
    EXPECT_EQ(tpkit::frame_text(syms.find(getpid(), address_of(&tpk_symbols_other)), false),
              "tpk_symbols_other");
    // C++ names demangled.
    EXPECT_EQ(tpkit::frame_text(syms.find(getpid(), address_of(&tpkit_symbols_test::scoped_probe)), false),
              "tpkit_symbols_test::scoped_probe(int)");
}

TEST(UserSymbols, SharedLibraryFunctionFromItsDynamicSymbols)
{
    // getpid lives in the C library, mapped at an address chosen at run time; Debian's libc has
    // .dynsym only. It is also exported as __getpid: the plain name is shown.
    auto s = UserSymbols().find(getpid(), reinterpret_cast<std::uint64_t>(&getpid));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->name, "getpid");
    EXPECT_EQ(s->offset, 0u);
    EXPECT_NE(s->module.find("libc"), std::string::npos) << s->module;
}

TEST(ElfSymbols, FileOffsetOfAMappingToFunction)
{
    // Where /proc/self/maps puts the probe: its mapping's start and file offset give the probe's
    // offset in the file, which the file's segments turn into its link-time address.
    const std::uint64_t probe = address_of(&tpk_symbols_probe);
    std::ifstream maps("/proc/self/maps");
    std::uint64_t file_offset = 0;
    bool found = false;
    for (std::string line; !found && std::getline(maps, line);) {
        std::uint64_t start = 0, end = 0, offset = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx %*s %lx", &start, &end, &offset) == 3 &&
            probe >= start && probe < end) {
            file_offset = probe - start + offset;
            found = true;
        }
    }
    ASSERT_TRUE(found);
    tpkit::ElfSymbols elf("/proc/self/exe");
    EXPECT_GT(elf.size(), 10u);
    auto s = elf.find_file_offset(file_offset + 1);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->name, "tpk_symbols_probe");
    EXPECT_EQ(s->offset, 1u);
    EXPECT_FALSE(elf.find_file_offset(~std::uint64_t(0)));
    EXPECT_THROW(tpkit::ElfSymbols{kallsyms_fixture}, tpkit::Error); // not an ELF file
}

TEST(UserSymbols, UnknownAddressesAndGoneProcesses)
{
    UserSymbols syms;
    EXPECT_FALSE(syms.find(getpid(), 0x10));
    // Stack memory is no file mapping.
    int local = 0;
    EXPECT_FALSE(syms.find(getpid(), reinterpret_cast<std::uint64_t>(&local)));
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, nullptr, 0);
    EXPECT_FALSE(syms.find(child, address_of(&tpk_symbols_probe)));
    // The cache answers again without rereading; forget() makes the next lookup reread.
    syms.forget(getpid());
    EXPECT_EQ(syms.find(getpid(), address_of(&tpk_symbols_probe))->name, "tpk_symbols_probe");
}

TEST(FrameText, FileOffsetWhenNoSymbol)
{
    EXPECT_EQ(tpkit::frame_text(Symbol{"", 0x1234, "/usr/lib/x86_64-linux-gnu/libfoo.so.1"}, true),
              "[libfoo.so.1+0x1234]");
    EXPECT_EQ(tpkit::frame_text(std::nullopt, false), "[unknown]");
}

} // namespace
