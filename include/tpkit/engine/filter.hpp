// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Event filters in the kernel's grammar (Documentation/trace/events.rst, section 5), compiled
// for the BPF evaluator in bpf/include/tpkit/filter.bpf.h.
//
//   numbers:  FIELD == != < <= > >= & NUMBER   (decimal, 0x hex, 0 octal; '-' for signed fields)
//   strings:  FIELD == != ~ "TEXT" or 'TEXT'   (~ is a glob: * ? [a-z] [!a-z] \c, "!" in front negates)
//   logic:    && (binds tighter) || ! ( )
//
// Fields come from the event's format, plus the kernel's generic ones: comm/COMM (the current
// task's name) and cpu/CPU/common_cpu. Of the common_* header, which BPF programs at a tracepoint
// run before the kernel fills in, common_pid is the current thread's ID and common_type the
// event's ID, the values the kernel writes there; common_flags and common_preempt_count are
// refused (see header_field). Strings and globs follow the kernel's rules exactly, over every
// byte of the string (a record holds at most 8 KiB, PERF_MAX_TRACE_SIZE), quirks included:
// `==` never treats * as a wildcard; "abc*", "*abc", "*abc*" are the kernel's
// FRONT/END/MIDDLE matches (for char arrays, "*abc" compares the array's last bytes before its
// final byte); a pattern starting with a digit is compared literally.
//
// tpkit follows the kernel of 2024 and later (6.18 is the reference) where kernels differ: older
// glob_match() (6.1) lets a negated class such as [!a-z] match the end of the string.
// Where any kernel's answer depends on bytes after a char array's NUL (END and MIDDLE matches read
// them; some events leave them uninitialised, e.g. task_rename.newcomm), no evaluator can agree.
//
// Where tpkit is stricter or narrower than the kernel:
//   - a string ends with its field: a char array (or __data_loc string) with no NUL in it is
//     matched over its own bytes, where the kernel's glob_match() reads on past its end into the
//     fields after it (or past the record);
//   - of `char *` fields only a syscall's string arguments (is_syscall_user_string: openat's
//     filename...) compare as strings, read from the caller's memory: their first 255 bytes
//     (TPKIT_USER_STR_MAX - 1), an unreadable pointer as ""; other pointers compare as numbers;
//   - string constants are at most 31 bytes; at most 64 comparisons, 8 automaton-matched
//     patterns (globs with ? [ \ or an inner *, and "*abc*") and 100 nested '(' and '!' per
//     expression;
//   - fields that are neither strings nor 1/2/4/8-byte integers are refused (the kernel accepts
//     them and never matches).
#pragma once

#include "tpkit/filter.h"
#include "tpkit/kernel/format.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tpkit {

using FilterProgram = struct tpkit_filter_prog;

// Compiles EXPR against the event's format (its ID becomes the program's event_id, what
// common_type compares). A blank expression gives the empty program, which matches every event.
// Bad input throws Error(Exit::usage) with a one-line message naming the column, e.g.
// "filter: unknown field 'foo' at column 7".
FilterProgram compile_filter(std::string_view expr, const EventFormat& format);

// What BPF programs at a classic tracepoint can know of a common_* header field. The kernel writes
// the header after they run (perf_tp_event(), from tracing_gen_ctx()); until then its first 8
// bytes hold a pt_regs pointer. common_type is the event's ID and common_pid the current thread,
// both known in BPF; common_flags (irq, softirq, need-resched state) and common_preempt_count have
// no BPF helper, so they are unavailable.
enum class HeaderField { none, type, pid, unavailable };
HeaderField header_field(const Field& f);

// Why FIELD cannot be used, for an unavailable header field: "'common_flags' is not visible to
// BPF programs at a tracepoint (the kernel fills it in after they run, from state BPF cannot read)".
std::string header_field_unavailable(std::string_view field);

// What a record does not carry but the generic fields read: the current task and CPU. tid is
// what the kernel writes as common_pid (the thread's ID, not the process's).
struct FilterEnv {
    std::string_view comm;
    std::int32_t cpu = 0;
    std::int32_t tid = 0;
    // The string a syscall's `const char *` argument points to in the caller's memory; nullopt
    // (or no function) where reading it faults.
    std::function<std::optional<std::string>(std::uint64_t address)> user_string = {};
};

// Runs PROG over a record's raw bytes exactly as the BPF evaluator does (bytes past the end of
// RECORD read as zero; common_pid is ENV's tid, common_type the program's event_id, whatever the
// record's header holds). The oracle for the BPF side in tests, and a way to filter in user space.
bool filter_match(const FilterProgram& prog, std::span<const std::byte> record,
                  const FilterEnv& env = {});

// One line per instruction, for diagnostics.
std::string describe_filter(const FilterProgram& prog);

} // namespace tpkit
