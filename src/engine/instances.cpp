// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Engine instances and their attachment: one per classic tracepoint, or raw_syscalls instances
// that serve many syscall events.
#include "tpkit/engine/engine.hpp"

#include "engine/decode.hpp"
#include "engine/kernel_text.hpp"
#include "tpkit/kernel/symbols.hpp"
#include "tpkit/kernel/syscalls.hpp"
#include "tpkit/support/error.hpp"
#include "tpkit/support/json.hpp"

#include <bpf/bpf.h>
#include <fmt/core.h>
#include <fnmatch.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <cctype>
#include <optional>

namespace fs = std::filesystem;

namespace tpkit {

namespace {

// What bpf/include/tpkit/syscall.bpf.h needs: x86-64's registers and thread_info (5.11 put
// syscall_work before status), bpf_task_pt_regs (5.15) and the kernel's BTF, which its loads
// are checked against.
bool raw_syscalls_usable()
{
#if defined(__x86_64__)
    utsname u{};
    unsigned major = 0, minor = 0;
    if (uname(&u) != 0 || std::sscanf(u.release, "%u.%u", &major, &minor) != 2)
        return false;
    std::error_code ec;
    return (major > 5 || (major == 5 && minor >= 15)) && fs::exists("/sys/kernel/btf/vmlinux", ec);
#else
    return false;
#endif
}

tpkit_syscall_tracepoint syscall_side(const TracepointName& name)
{
    if (name.system != "syscalls" || !syscall_event_number(name.event))
        return TPKIT_SYSCALL_NONE;
    if (name.event.starts_with("sys_enter_"))
        return TPKIT_SYSCALL_ENTER;
    return name.event.starts_with("sys_exit_") ? TPKIT_SYSCALL_EXIT : TPKIT_SYSCALL_NONE;
}

bool filter_reads(const FilterProgram& filter, tpkit_filter_source source)
{
    return std::any_of(filter.insns, filter.insns + filter.len,
                       [&](const tpkit_filter_insn& i) { return i.source == source; });
}

// The arguments of a syscall event that the engine reads (bit i: args[i] of
// tpkit_syscall_record): those the filter, the key and the value name; all for a copy.
std::uint8_t arguments_read(const EventPlan& plan)
{
    constexpr std::uint8_t all = 0x3f;
    if (plan.config.event_id != 0) // tpsnoop copies the record
        return all;
    auto bit = [](std::uint32_t offset) -> std::uint8_t {
        constexpr std::uint32_t first = offsetof(tpkit_syscall_record, args);
        return offset < first ? 0 : static_cast<std::uint8_t>(1u << ((offset - first) / 8)) & all;
    };
    std::uint8_t mask = 0;
    for (std::uint32_t i = 0; i < plan.filter.len; i++) {
        const auto& insn = plan.filter.insns[i];
        if (insn.source == TPKIT_FILTER_SRC_UNSIGNED || insn.source == TPKIT_FILTER_SRC_SIGNED ||
            insn.source == TPKIT_FILTER_SRC_STR_USER)
            mask |= bit(insn.offset);
        else if (insn.source == TPKIT_FILTER_SRC_STR_FIXED ||
                 insn.source == TPKIT_FILTER_SRC_STR_DATA_LOC ||
                 insn.source == TPKIT_FILTER_SRC_STR_REL_LOC)
            mask = all; // no syscall event has strings; read everything rather than guess
    }
    if (plan.config.key_parts & TPKIT_KEY_BIT(TPKIT_KEY_FIELD))
        mask |= bit(plan.config.key_field.offset);
    if (plan.config.value.access != TPKIT_FIELD_NONE)
        mask |= bit(plan.config.value.offset);
    return mask;
}

// The rodata of a raw instance serving PLAN: what tells events apart (index, ID, record size)
// moves to the syscall map, so that events differing in nothing else compare equal.
InstancePlan raw_instance(const EventPlan& plan, tpkit_syscall_tracepoint side)
{
    InstancePlan instance;
    instance.config = plan.config;
    instance.config.event = 0;
    instance.config.event_id = 0;
    instance.config.fixed_size = 0;
    instance.config.user_strings = 0;
    instance.config.syscall_tracepoint = static_cast<std::uint8_t>(side);
    instance.filter = plan.filter;
    if (!filter_reads(plan.filter, TPKIT_FILTER_SRC_EVENT_ID))
        instance.filter.event_id = 0;
    instance.config.syscall_args = arguments_read(plan);
    return instance;
}

bool same_rodata(const InstancePlan& a, const InstancePlan& b)
{
    return std::memcmp(&a.config, &b.config, sizeof(a.config)) == 0 &&
           std::memcmp(&a.filter, &b.filter, sizeof(a.filter)) == 0;
}

void fill_syscall_events(bpf_map* map, const InstancePlan& instance,
                         const std::vector<EventPlan>& plans)
{
    for (std::uint32_t index : instance.events) {
        const EventPlan& plan = plans[index];
        std::uint32_t nr = *syscall_event_number(plan.name.event);
        tpkit_syscall_event value{1, index, plan.format.id, plan.config.fixed_size,
                                  plan.config.user_strings};
        check_libbpf(bpf_map__update_elem(map, &nr, sizeof(nr), &value, sizeof(value), BPF_ANY),
                     ("cannot fill the syscall map of " + plan.name.str()).c_str());
    }
}

} // namespace

std::vector<InstancePlan> plan_instances(const std::vector<EventPlan>& plans, bool classic)
{
    return plan_instances(plans, classic, raw_syscalls_usable());
}

std::vector<InstancePlan> plan_instances(const std::vector<EventPlan>& plans, bool classic,
                                         bool raw_syscalls_usable)
{
    std::vector<InstancePlan> instances;
    std::vector<std::size_t> raw; // instances on raw_syscalls, to group into
    for (std::uint32_t i = 0; i < plans.size(); i++) {
        auto side = classic || !raw_syscalls_usable ? TPKIT_SYSCALL_NONE : syscall_side(plans[i].name);
        if (side == TPKIT_SYSCALL_NONE) {
            instances.push_back({{i}, plans[i].config, plans[i].filter});
            continue;
        }
        InstancePlan instance = raw_instance(plans[i], side);
        auto same = std::find_if(raw.begin(), raw.end(), [&](std::size_t r) {
            return same_rodata(instances[r], instance);
        });
        if (same != raw.end()) {
            instances[*same].events.push_back(i);
            continue;
        }
        instance.events.push_back(i);
        raw.push_back(instances.size());
        instances.push_back(std::move(instance));
    }
    return instances;
}

void prepare_instance(const EnginePrograms& programs, const InstancePlan& instance)
{
    bool raw = instance.raw_syscalls();
    check_libbpf(bpf_program__set_autoload(programs.tracepoint, !raw),
                 "cannot choose the engine's program");
    check_libbpf(bpf_program__set_autoload(programs.syscall, raw),
                 "cannot choose the engine's program");
    if (raw)
        check_libbpf(bpf_map__set_max_entries(programs.syscall_events, TPKIT_SYSCALL_NR_MAX),
                     "cannot size the engine's syscall map");
    // A map less per instance: hundreds of classic events hold hundreds fewer descriptors.
    check_libbpf(bpf_map__set_autocreate(programs.filter_user_str,
                                         filter_reads(instance.filter, TPKIT_FILTER_SRC_STR_USER)),
                 "cannot leave out the filter's string buffer");
    if (programs.user_strings)
        check_libbpf(bpf_map__set_autocreate(programs.user_strings,
                                             raw || instance.config.user_strings),
                     "cannot leave out the syscall strings' buffer");
}

Link attach_instance(const EnginePrograms& programs, const InstancePlan& instance,
                     const std::vector<EventPlan>& plans)
{
    if (!instance.raw_syscalls()) {
        const TracepointName& name = plans[instance.events.front()].name;
        return attach_tracepoint(programs.tracepoint, name.system, name.event);
    }
    fill_syscall_events(programs.syscall_events, instance, plans);
    const char* tracepoint =
        instance.config.syscall_tracepoint == TPKIT_SYSCALL_ENTER ? "sys_enter" : "sys_exit";
    bpf_link* link = bpf_program__attach_raw_tracepoint(programs.syscall, tracepoint);
    if (!link)
        throw_libbpf_error(Exit::kernel_refused,
                           fmt::format("cannot attach to raw tracepoint {}", tracepoint), errno);
    for (std::uint32_t index : instance.events)
        note_traced(plans[index].name.str()); // what was asked for, through raw_syscalls
    return Link(link, &bpf_link__destroy);
}

void say_attached_before_stop(std::string_view tool, std::size_t attached, std::size_t planned)
{
    if (attached < planned)
        fmt::print(stderr, "{}: stopped while attaching: {} of {} tracepoints attached\n", tool,
                   attached, planned);
}

void share_map(bpf_map* from, bpf_map* into)
{
    if (int err = bpf_map__reuse_fd(into, bpf_map__fd(from)))
        throw_libbpf_error(Exit::kernel_refused,
                           fmt::format("cannot share map {}", bpf_map__name(from)), err);
}

} // namespace tpkit
