// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Decoding raw tracepoint records in user space from the event's format (tpsnoop): integers by
// size and signedness, pointers in hex, strings from char[N] and __data_loc/__rel_loc char[],
// arrays element by element, anything else as hex bytes.
#pragma once

#include "tpkit/engine.h"
#include "engine/kernel_text.hpp"
#include "engine/user_strings.hpp"
#include "tpkit/kernel/format.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tpkit {

struct DecodedValue {
    enum class Kind {
        integer, // number, is_signed
        pointer, // number, printed in hex
        string,  // text
        array,   // elements (integers or pointers)
        bytes,   // text holds the raw bytes
        missing, // the record is too short for the field
    };
    Kind kind = Kind::missing;
    bool is_signed = false;
    std::uint64_t number = 0;
    std::string_view text; // into the decoded record: valid while the record is
    std::vector<DecodedValue> elements;

    // trace_pipe style: 42, -1, 0xffff8880..., the string as is, [1,2,3], 0a0b0c
    void append_str(std::string& out) const;
    std::string str() const;
    // As a JSON value: numbers, "0x…" strings for pointers, strings, arrays, "hex" for bytes,
    // null when missing.
    void append_json(std::string& out) const;
    std::string json() const;
};

// Decodes field F of RECORD (the raw bytes as the kernel wrote them, little-endian).
DecodedValue decode_field(const Field& f, std::span<const std::byte> record);

// Which fields tpsnoop prints for an event: the -f list (names absent from this event are
// skipped), or every field but common_* when the list is empty.
std::vector<const Field*> fields_to_print(const EventFormat& format,
                                          const std::vector<std::string>& selected);

// One event as tpsnoop received it: header and raw record. The record's common_* header is BPF's
// (the kernel writes its own after BPF runs): common_type and common_pid as the kernel writes
// them, common_flags and common_preempt_count zero (tpsnoop refuses to print those).
struct SnoopEvent {
    tpsnoop_header header{};
    std::span<const std::byte> record;
    UserStrings strings; // a syscall event's string arguments, as read at the event

    // Splits a transport record; false when it is shorter than the header says.
    static bool parse(std::span<const std::byte> data, SnoopEvent& out);
    // The record's common_type: the event's ID.
    std::uint32_t event_id() const;
};

// The line writers append to OUT (no newline) so that a reader reuses one buffer for all
// events: no allocation per event once it has grown.

// "comm-tid [cpu] TIME: ", TIME given by the caller (trace_pipe's layout before the event).
void append_snoop_head(std::string& out, const SnoopEvent& event, std::string_view time);
// The raw field view: "event: a=1 b=x", a syscall's string argument "quoted" (user_strings.hpp).
void append_snoop_fields(std::string& out, const SnoopEvent& event, const EventFormat& format,
                         const std::vector<const Field*>& fields);
// The head, then the raw field view.
void append_snoop_text(std::string& out, const SnoopEvent& event, const EventFormat& format,
                       const std::vector<const Field*>& fields, std::string_view time);

// {"time":…,"event":"sys:event","comm":…,"pid":…,"tid":…,"cpu":…,"fields":{FIELD:VALUE,…}}; time_key and
// time_value are given by the caller (a number). A syscall's string argument is the pointer,
// then "F_sym" the string and "F_cut":true when it was cut. With KERNEL_TEXT, each field the kernel prints
// as a name is followed by that name (KernelText::append_json_extras: "newstate_sym":…).
void append_snoop_json(std::string& out, const SnoopEvent& event, const EventFormat& format,
                       const std::vector<const Field*>& fields, std::string_view time_key,
                       std::int64_t time_value, KernelText* kernel_text = nullptr);

} // namespace tpkit
