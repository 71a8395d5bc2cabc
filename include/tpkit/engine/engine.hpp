// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Configuring the generic engines (tpsnoop, tpcount, tphist) for tracepoints chosen at run time:
// events found by name or glob, their fields resolved from the live format into the rodata of
// include/tpkit/engine.h, and --by keys turned back into text.
#pragma once

#include "tpkit/bpf/maps.hpp"
#include "tpkit/bpf/skeleton.hpp"
#include "tpkit/cli/cli.hpp"
#include "tpkit/engine.h"
#include "tpkit/engine/filter.hpp"
#include "tpkit/kernel/format.hpp"
#include "tpkit/kernel/tracefs.hpp"
#include "tpkit/output/histogram.hpp"

#include <bpf/libbpf.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tpkit {

// tracefs_root()/events, where the tools find events and formats.
std::filesystem::path live_events_root();

// Events under EVENTS_ROOT (<root>/<system>/<event>/format) whose "system:event" matches GLOB
// (shell wildcards * ? [..]); a glob without ':' matches either the system or the event name.
// Empty glob: every event. Sorted by name.
std::vector<TracepointName> list_events(const std::filesystem::path& events_root,
                                        std::string_view glob);

bool has_wildcard(std::string_view text);

// One traced event, ready for an engine instance.
struct EventPlan {
    TracepointName name;
    EventFormat format;
    FilterProgram filter{};
    tpkit_engine_config config{};
};

// Tools that take several events and [interval] [count] as positionals: the trailing numbers
// (two at most) go to options.interval and options.count, the rest are returned as event names.
// Bad numbers, or no event left → Error(usage).
std::vector<std::string> split_interval_count(const std::vector<std::string>& positionals,
                                              CommonOptions& options);

// --filter, given once or more: `EXPR` for every event, or `SYSTEM:EVENT=EXPR` (the event may be
// a glob) for the events it names alone. An event must match every expression that applies to
// it. A string converts to one expression for every event.
class EventFilters {
public:
    EventFilters() = default;
    EventFilters(std::string_view every_event);                // NOLINT: one expression, implicit
    EventFilters(const char* every_event) : EventFilters(std::string_view(every_event)) {} // NOLINT
    EventFilters(const std::string& every_event) : EventFilters(std::string_view(every_event)) {} // NOLINT
    // Each --filter as given; an empty EXPR after `SYSTEM:EVENT=` → Error(usage).
    explicit EventFilters(const std::vector<std::string>& options);

    // The same, with EXPR added for every event.
    EventFilters and_every(std::string_view expr) const;

    // The expression for an event ("" when none applies).
    std::string of(const TracepointName& event) const;

    // Error(usage) for a `SYSTEM:EVENT=` filter that names none of EVENTS.
    void require_used(const std::vector<TracepointName>& events) const;

private:
    struct Scoped {
        std::string events; // a glob of "system:event"; "" for every event
        std::string expr;
    };
    std::vector<Scoped> filters_;
};

// The events named by PATTERNS ("sys:event" or a glob), each with its FILTERS compiled against
// its own format and config.event set to its index. Unknown event or a glob that matches nothing →
// Error(unknown_target); a bad filter → Error(usage). At most max_events events.
// ftrace:* events take no BPF programs: named, or all a glob matches → Error(unknown_target);
// among other events a glob matches, they are left out, said once on stderr
// ("PROGRAM: skipping N ftrace:* events: ...").
std::vector<EventPlan> plan_events(const std::filesystem::path& events_root,
                                   const std::vector<std::string>& patterns,
                                   const EventFilters& filters, std::size_t max_events = 1024);

// The field NAME of an event; Error(unknown_target) naming the fields it has otherwise.
const Field& find_field(const EventFormat& format, std::string_view name);

// How an engine reads F: direct load, probe read, or one of the string forms. Fields that are
// neither 1/2/4/8-byte integers nor strings give access TPKIT_FIELD_NONE.
tpkit_field_spec field_spec(const Field& f);

bool is_numeric(const Field& f);

// What --by names: comm, pid, tid, cpu, kstack, ustack or a field of the event(s), or several
// of them separated by commas ("pid,comm", "kstack,ustack", "comm,FIELD"): a key made of parts.
struct KeyChoice {
    // What a field key stands for: the field's value, or (--by syscall, --by errno) the syscall
    // number or the failed syscall's error, of each event's own field, shown by name.
    enum class Meaning { value, syscall, error };
    std::vector<tpkit_key_source> parts; // in --by order; empty: no key
    std::string field;                   // the TPKIT_KEY_FIELD part's field (one at most)
    Meaning meaning = Meaning::value;

    bool empty() const { return parts.empty(); }
    bool has(tpkit_key_source part) const;
    bool has_stack() const { return has(TPKIT_KEY_KSTACK) || has(TPKIT_KEY_USTACK); }
    // tpkit_engine_config.key_parts: TPKIT_KEY_BIT() of each part.
    std::uint8_t bits() const;
    std::string name() const; // "pid,comm": what --by said, in its order
    // A part's label: "comm", "pid", "kstack", the field's name.
    std::string name(tpkit_key_source part) const;
    // The field a field key reads in FORMAT; null when it has none.
    const Field* field_in(const EventFormat& format) const;
};

// plan_events() for a tool keyed by KEY: with --by errno, failed syscalls only (`ret < 0` added
// to FILTER), once every event is known to be a syscall exit (else Error(usage) saying so).
std::vector<EventPlan> plan_keyed_events(const std::filesystem::path& events_root,
                                         const std::vector<std::string>& patterns,
                                         const EventFilters& filters, const KeyChoice& key,
                                         std::size_t max_events = 1024);

// Parses --by (empty: no key): parts separated by commas, each at most once, a field at most
// once. `allowed` lists the other parts the tool takes. ustack brings comm into the key (the
// root frame of a folded stack, as bcc's tools print it) when --by does not name it.
KeyChoice parse_key(std::string_view by, std::initializer_list<tpkit_key_source> allowed);

// Sets config.key_parts/key_field for the event; a field that is not in the format →
// Error(unknown_target), one that can be neither a number nor a string → Error(usage).
// common_pid is the current thread's ID (what the kernel writes there); the other common_*
// fields → Error(usage) (see header_field in filter.hpp).
void configure_key(tpkit_engine_config& config, const KeyChoice& key, const EventFormat& format);

// One part of a key read back from a map, as text: the comm or string (ending in "…" when it was
// longer than a key holds and cut), the number in decimal (hex for a pointer field). Stacks are
// not text here (see src/collectors/engine_keys.hpp): empty.
std::string key_text(const tpkit_engine_key& key, const KeyChoice& choice, tpkit_key_source part,
                     const EventFormat& format);
// Once per run, on stderr: string keys were cut, so values that differ only past the cut are
// counted together (under the key ending in "…"). Call with every key read back.
void note_cut_key(std::string_view tool, const tpkit_engine_key& key, const KeyChoice& choice);

// Whether key_text() of PART gives a decimal number (for JSON, and sorting as numbers): pid,
// tid, cpu, integer fields.
bool key_is_number(const KeyChoice& choice, tpkit_key_source part, const EventFormat& format);

// tphist: sets config.value to the numeric field NAME. Unknown → Error(unknown_target); a string,
// array, oddly sized or common_* field → Error(usage) saying what it is.
void configure_value(tpkit_engine_config& config, const EventFormat& format, std::string_view name);

// tpsnoop: checks its -f list against the events and sets each plan's record layout
// (configure_record). A name no event has → Error(unknown_target) listing the first event's
// fields; common_flags or common_preempt_count → Error(usage): BPF cannot know them (the copies
// carry zero there), while common_type and common_pid are filled in as the kernel writes them.
void prepare_snoop(std::vector<EventPlan>& plans, const std::vector<std::string>& fields);

// The event's ID, the record's fixed size and where its dynamic fields are, so that BPF can copy
// the whole record. More than TPKIT_SNOOP_MAX_DYNAMIC dynamic fields → Error(usage).
void configure_record(tpkit_engine_config& config, const EventFormat& format);

// tphist's histogram from the summed slots of the map of config.hist_layout.
Histogram histogram_from_slots(const tpkit_engine_config& config,
                               std::span<const std::uint64_t> slots);

// tplist: "sys:event", and with fields one line per field with type, offset, size, signedness.
std::string describe_event(const EventFormat& format, bool with_fields);
// {"type":"tracepoint","event":"sys:event","id":N[,"format":[{"name":…,"type":…,"offset":…,
// "size":…,"signed":…,"common":…},…]]}
std::string describe_event_json(const EventFormat& format, bool with_fields);

// The engine instances of a run. A classic event gets an instance of its own, on its tracepoint.
// Syscall events (syscalls:sys_enter_* / sys_exit_*) go through raw_syscalls:sys_enter /
// sys_exit (include/tpkit/engine.h): events that the same rodata serves share one instance,
// which picks them by syscall number, so that the cost of an event, start-up and exit do not
// grow with the number of syscalls traced.
struct InstancePlan {
    std::vector<std::uint32_t> events; // indexes into the run's plans; one for a classic event
    tpkit_engine_config config{};      // the instance's rodata
    FilterProgram filter{};
    bool raw_syscalls() const { return config.syscall_tracepoint != TPKIT_SYSCALL_NONE; }
};

// The instances for PLANS: raw_syscalls where this machine allows it (x86-64, Linux 5.11+) and
// unless `classic`; syscall events whose number the build's table lacks stay classic.
std::vector<InstancePlan> plan_instances(const std::vector<EventPlan>& plans, bool classic);

// The same, with whether this machine allows raw_syscalls given (for tests).
std::vector<InstancePlan> plan_instances(const std::vector<EventPlan>& plans, bool classic,
                                         bool raw_syscalls_usable);

// An engine's two programs and the map its raw one picks events from.
struct EnginePrograms {
    bpf_program* tracepoint; // SEC("tracepoint")
    bpf_program* syscall;    // SEC("raw_tracepoint")
    bpf_map* syscall_events; // tpkit_syscall_events
    bpf_map* filter_user_str; // tpkit_filter_user_str
    bpf_map* user_strings = nullptr; // tpsnoop's buffer of a syscall event with its strings
};

// Before load: only the program the instance attaches is loaded; its syscall map is sized; the
// buffers of syscall strings are left out where the filter and the copy read none.
void prepare_instance(const EnginePrograms& programs, const InstancePlan& instance);

// After load: fills the syscall map and attaches the instance to its tracepoint.
Link attach_instance(const EnginePrograms& programs, const InstancePlan& instance,
                     const std::vector<EventPlan>& plans);

// Turns the programs of every instance on or off (tpkit_engine_armed,
// bpf/include/tpkit/armed.bpf.h): on once the run is attached, off as soon as it ends, before
// the detach, a grace period per classic tracepoint (bench/BENCHMARKS.md, "glob-scale").
template <class Instances>
void arm_instances(Instances& instances, bool armed)
{
    for (auto& skel : instances)
        skel->bss->tpkit_engine_armed = armed;
}

// Adds --classic, which keeps syscall events on their own tracepoints.
void add_classic_option(Cli& cli, bool& classic);

// Adds --stack-storage-size: distinct stacks a stack map keeps for the whole run (the kernel's
// stack maps are not drained); past it, stacks are counted as not recorded.
void add_stack_storage_option(Cli& cli, std::uint32_t& stacks);
// Adds --perf-max-stack-depth: frames kept of each stack (`which`: "each stack", "each user
// stack"), 1 to `most`.
void add_stack_depth_option(Cli& cli, std::uint32_t& depth, std::uint32_t most, std::string_view which);
// Before load: sizes a stack trace map (TPKIT_STACK_MAP) to `stacks` stacks of `depth` frames.
void size_stack_map(bpf_map* map, std::uint32_t stacks, std::uint32_t depth);

// Before load: makes `into` use the already created map `from` (engine instances share maps).
void share_map(bpf_map* from, bpf_map* into);

// From this many events on, attaching takes long enough to say so on stderr.
inline constexpr std::size_t many_events = 50;

// A stop signal while attaching ends the attaching at once (each attach would cost its detach
// too, tens of milliseconds for a classic tracepoint): says on stderr how many of the planned
// events were attached when fewer were.
void say_attached_before_stop(std::string_view tool, std::size_t attached, std::size_t planned);

} // namespace tpkit
