// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The rest of an engine's rodata: the value it sums or buckets, the fields tpsnoop records.
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

namespace tpkit {

void configure_value(tpkit_engine_config& config, const EventFormat& format, std::string_view name)
{
    const Field& f = find_field(format, name);
    if (header_field(f) == HeaderField::unavailable)
        throw Error(Exit::usage, header_field_unavailable(f.name));
    if (header_field(f) != HeaderField::none)
        throw Error(Exit::usage, fmt::format("field '{}' of {} is an identifier, not a measure: "
                                             "count it with tpcount --by", f.name,
                                             event_label(format)));
    if (!is_numeric(f))
        throw Error(Exit::usage,
                    fmt::format("field '{}' of {} is '{}' ({} bytes), not a number: a histogram "
                                "needs a 1, 2, 4 or 8-byte integer field",
                                f.name, event_label(format), f.type, f.size));
    config.value = field_spec(f);
}

void prepare_snoop(std::vector<EventPlan>& plans, const std::vector<std::string>& fields)
{
    for (const std::string& name : fields) {
        const Field* found = nullptr;
        for (const EventPlan& plan : plans)
            if ((found = plan.format.field(name)))
                break;
        if (!found)
            find_field(plans.front().format, name); // throws, listing the fields
        else if (header_field(*found) == HeaderField::unavailable)
            throw Error(Exit::usage, "-f " + header_field_unavailable(name));
    }
    std::optional<std::uint64_t> jiffies; // read once, for the first event that needs it
    for (EventPlan& plan : plans) {
        configure_record(plan.config, plan.format);
        for (const Field* f : fields_to_print(plan.format, fields))
            if (is_syscall_user_string(plan.format, *f))
                plan.config.user_strings |= static_cast<std::uint8_t>(1u << syscall_argument_index(*f));
        plan.config.kernel_strings = kernel_string_offsets(plan.format, plan.config.kernel_string_offsets);
        if (reads_jiffies(plan.format)) {
            if (!jiffies)
                jiffies = kernel_symbol_address("jiffies_64").value_or(0);
            plan.config.jiffies_address = *jiffies; // 0 (unknown): the kernel's text has age 0
        }
    }
}

void configure_record(tpkit_engine_config& config, const EventFormat& format)
{
    config.event_id = format.id;
    config.fixed_size = std::min<std::uint32_t>(format.fixed_size(), TPKIT_SNOOP_RECORD_MAX);
    config.dynamic_count = 0;
    for (const Field& f : format.fields) {
        if (!f.is_dynamic())
            continue;
        if (config.dynamic_count == TPKIT_SNOOP_MAX_DYNAMIC)
            throw Error(Exit::usage, fmt::format("{} has more than {} dynamic fields",
                                                 event_label(format), TPKIT_SNOOP_MAX_DYNAMIC));
        config.dynamic_offsets[config.dynamic_count++] =
            f.offset | (f.kind == FieldKind::rel_loc ? TPKIT_SNOOP_REL_LOC : 0u);
    }
}

Histogram histogram_from_slots(const tpkit_engine_config& config,
                               std::span<const std::uint64_t> slots)
{
    switch (config.hist_layout) {
    case TPKIT_HIST_LOGLINEAR:
        return Histogram::from_loglinear(slots, config.sub_bits);
    case TPKIT_HIST_LINEAR:
        return Histogram::from_linear(slots, linear_range(config.linear_min, config.linear_max,
                                                          config.linear_step));
    default:
        return Histogram::from_log2(slots);
    }
}

} // namespace tpkit
