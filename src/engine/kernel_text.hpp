// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// An event's record as the kernel's trace output prints it (the text after "TIME: " in
// trace_pipe): the event's print fmt run by libtraceevent, the library perf and trace-cmd use,
// without its plugins (they print some events their own way, not the kernel's). Where
// libtraceevent and the kernel differ, tpkit does what the kernel does:
//  - %pS and %ps through kallsyms as "func+0x57/0xf0" and "func" (" [module]" after either);
//  - %p as the kernel prints it with the trace option hash-ptr off: 16 hex digits, never hashed
//    (a hash is a secret of the running kernel; tpkit shows the real address);
//  - enumerators the format file names but does not define (IOPRIO_CLASS_BE, HRTIMER_MODE_ABS)
//    take their values from the kernel's BTF;
//  - %#x of 0 as 0x0, as the kernel's vsnprintf prints it;
//  - operators grouped as in C (libtraceevent reads `x & (A | B)` as (x & A) | B, a - b - c as
//    a - (b - c));
//  - jiffies as read at the event, `char *` fields into kernel memory as their strings read at
//    the event (tpsnoop's BPF side reads both);
//  - syscalls:* events in the kernel's own form, `sys_openat(dfd: 0xffffff9c, ...)` and
//    `sys_openat -> 0x3`, which their format files' print fmt does not describe;
// and where tpkit shows more than the kernel can: a syscall's string argument as the string,
// `filename: "/etc/passwd"`, where the kernel prints its address.
#pragma once

#include "engine/user_strings.hpp"
#include "tpkit/kernel/format.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

struct tep_handle;
struct tep_event;
struct tep_print_arg;
struct trace_seq;

namespace tpkit {

class KernelSymbols;

// Whether FORMAT's print fmt reads jiffies: its records then carry jiffies_64 read at the event
// (tpsnoop_header.jiffies), for the kernel's text such as writeback's age=.
bool reads_jiffies(const EventFormat& format);

class KernelText {
public:
    // Symbols for %pS/%ps are read from KALLSYMS when an event first needs them; enumerators
    // from the BTF file (Btf::load; the running kernel's when empty; none when unreadable).
    explicit KernelText(std::filesystem::path kallsyms = "/proc/kallsyms",
                        std::filesystem::path btf = {});
    ~KernelText();
    KernelText(const KernelText&) = delete;
    KernelText& operator=(const KernelText&) = delete;

    // How the kernel prints a syscall's arguments: in hex without 0x ("fd: 3", "count: 1000")
    // before 6.18; from 6.18 on below 10 in decimal, else in hex with 0x ("fd: 3",
    // "count: 0x1000"). The running kernel's by default.
    enum class SyscallArgs { hex, decimal_below_10 };
    void set_syscall_args(SyscallArgs form) { syscall_args_ = form; }

    // Adds the event of FORMAT whose format file reads FORMAT_TEXT.
    void add(const EventFormat& format, std::string_view format_text);
    // The same from the format file; an unreadable file leaves the event to the fields view.
    void add_file(const EventFormat& format, const std::filesystem::path& file);

    // Reads now what the added events will need and only privileges can read (the addresses of
    // /proc/kallsyms need CAP_SYSLOG): call it before dropping them.
    void read_privileged_files();

    // Appends what the kernel prints for RECORD, an event of FORMAT added before: for most events
    // "name: " and the print fmt's text, for syscalls:* the kernel's syscall form. False, and
    // nothing appended, for an event whose print fmt libtraceevent could not parse. Where the
    // kernel prints a syscall's string argument as an address, the string read at the event
    // (STRINGS) is shown instead, "quoted" as strace does; the address when it could not be read.
    // A `char *` field into kernel memory prints as its string read at the event, when STRINGS
    // has it; JIFFIES is jiffies_64 at the event, for print fmts that read jiffies.
    bool append(std::string& out, const EventFormat& format, std::span<const std::byte> record,
                const UserStrings& strings = {}, std::uint64_t jiffies = 0);

    // JSON members that come after field F's raw value (",\"F_sym\":\"TCP_LISTEN\""), each the
    // kernel's rendering of the value: F_sym for __print_symbolic, __print_flags, %pS/%ps, a
    // syscall's number (its name) and a syscall's return value when it is an error ("-ENOENT").
    // Appends nothing for a field the kernel prints as a plain value.
    void append_json_extras(std::string& out, const EventFormat& format, const Field& f,
                            std::span<const std::byte> record);

private:
    struct Event;
    const Event* find(const EventFormat& format) const;
    std::string symbol_text(std::uint64_t address, bool with_offset);
    void read_kallsyms();
    static char* resolve(void* self, unsigned long long* address, char** module);
    std::string prepare_print_fmt(std::string_view format_text, const EventFormat& format);
    std::optional<std::int64_t> enumerator(std::string_view name);

    tep_handle* tep_;
    SyscallArgs syscall_args_;
    std::unique_ptr<trace_seq> seq_;
    std::map<std::uint32_t, Event> events_;
    std::filesystem::path kallsyms_path_, btf_path_;
    std::unique_ptr<KernelSymbols> kallsyms_;
    bool kallsyms_failed_ = false;
    bool needs_symbols_ = false; // an added event prints %pS or %ps
    std::unique_ptr<std::map<std::string, std::int64_t, std::less<>>> enumerators_;
    std::string resolved_; // what resolve() returned last: libtraceevent reads it right after
    unsigned resolutions_ = 0;
    std::string scratch_;
};

} // namespace tpkit
