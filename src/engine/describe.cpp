// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tplist's descriptions of an event, as text and JSON.
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

std::string describe_event(const EventFormat& format, bool with_fields)
{
    std::string text = event_label(format) + "\n";
    if (!with_fields)
        return text;
    for (const Field& f : format.fields) {
        std::string decl = f.kind == FieldKind::array
                               ? fmt::format("{} {}[{}]", f.elem_type, f.name, f.array_len)
                               : fmt::format("{} {}", f.type, f.name);
        text += fmt::format("    {:<40} offset:{:<4} size:{:<4} {}\n", decl + ";", f.offset, f.size,
                            f.is_signed ? "signed" : "unsigned");
    }
    return text;
}

std::string describe_event_json(const EventFormat& format, bool with_fields)
{
    JsonObject obj;
    obj.add("type", "tracepoint").add("event", event_label(format)).add("id", format.id);
    if (!with_fields)
        return obj.str();
    std::string fields = "[";
    for (const Field& f : format.fields) {
        if (fields.size() > 1)
            fields += ',';
        fields += JsonObject()
                      .add("name", f.name)
                      .add("type", f.type)
                      .add("offset", f.offset)
                      .add("size", f.size)
                      .add("signed", f.is_signed)
                      .add("common", f.common)
                      .str();
    }
    // "format", not "fields": tpsnoop's "fields" are an event's values, an object.
    return obj.add_raw("format", fields + "]").str();
}

} // namespace tpkit
