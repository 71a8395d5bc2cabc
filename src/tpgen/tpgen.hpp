// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpgen: C headers for BPF programs from tracefs format files (record structs + getters, CO-RE
// relocatable through the kernel's BTF) and from BTF alone (raw tracepoint arguments).
#pragma once

#include "tpkit/kernel/btf.hpp"
#include "tpkit/kernel/format.hpp"
#include "tpkit/kernel/tracefs.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpkit::tpgen {

// The format files of one kernel: a directory laid out like tracefs's events/
// (<system>/<event>/format), a directory holding such an events/, or a tarball of either (.tar
// or .tar.gz, whose format files are read into memory: nothing is unpacked on disk).
class FormatSet {
public:
    // Throws Error(unknown_target) when there is no such directory or tarball, or the tarball
    // cannot be read (not tar, truncated, compressed other than with gzip, too large).
    static FormatSet open(const std::filesystem::path& dir_or_tarball);
    static FormatSet live(); // tracefs_root()/events

    FormatSet(FormatSet&&) noexcept;
    FormatSet& operator=(FormatSet&&) = delete;
    ~FormatSet();

    // Names the set in generated headers: "tracefs" or the file name of the directory/tarball.
    const std::string& label() const { return label_; }
    std::vector<TracepointName> events() const; // sorted by system, then event
    bool has(const TracepointName& name) const;
    EventFormat read(const TracepointName& name) const; // throws Error(unknown_target)

    // A tarball's format file: where it was in the tarball, and its text.
    struct Member {
        std::string path;
        std::string text;
    };

private:
    FormatSet(std::filesystem::path root, std::string label);
    std::filesystem::path root_; // the directory of <system>/<event>/format; empty for a tarball
    std::string archive_;        // the tarball, for error messages
    std::map<std::pair<std::string, std::string>, Member> members_; // a tarball's, by (system, event)
    std::string label_;
};

// Expands "system:event" patterns (shell globs in either part) against the events of the sets:
// pattern order, each event once. Throws Error(unknown_target) when a pattern matches nothing,
// Error(usage) when it is not "system:event".
std::vector<TracepointName> expand(const std::vector<std::string>& patterns,
                                   const std::vector<const FormatSet*>& sets);

// Why NAME cannot be a member, parameter or variable name in a generated header (not an
// identifier, starting with a digit, a C keyword, a macro of the headers it is used with), or ""
// when it can. Such fields are refused (Error(usage)), never renamed.
std::string identifier_problem(std::string_view name);

// One kernel's formats with that kernel's BTF, named for the struct suffix ___<name>.
struct Flavour {
    std::string name;
    const FormatSet* formats = nullptr;
    const Btf* btf = nullptr;
};

// The flavour name used when only one kernel is given.
inline constexpr std::string_view default_flavour = "tpkit";

// The BTF struct that holds the records of an event: trace_event_raw_<event>, or the event
// class's trace_event_raw_<class> found by matching member names, offsets and sizes, narrowed by
// the raw tracepoint prototype (btf_trace_<event> against __bpf_trace_<class>) when several
// classes share the layout, then by name (the class whose name has the fewest words the event's
// name lacks). Nothing when BTF has none (syscalls:*, ftrace:*). Throws Error when
// trace_event_raw_<event> exists but does not match the format.
struct RecordStruct {
    std::string name;
    std::vector<std::string> alike; // other classes of the same layout and prototype
};
std::optional<RecordStruct> find_record_struct(const Btf& btf, const EventFormat& format);

// The header for EVENTS: per flavour, each event's record struct (fields at the format's
// offsets, asserted) and, per field, a getter choosing the flavour that matches the running
// kernel. Throws Error naming the event and field for anything it cannot express.
std::string generate_header(const std::vector<Flavour>& flavours,
                            const std::vector<TracepointName>& events);

// The header of typed raw tracepoint arguments (struct bpf_raw_tracepoint_args) for EVENTS,
// from the BTF typedefs btf_trace_<event>. Needs vmlinux.h where it is used.
std::string generate_raw_header(const Flavour& kernel, const std::vector<TracepointName>& events);

} // namespace tpkit::tpgen
