// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The tables themselves are generated at build time (constant_tables.cpp in the build tree).
#include "tpkit/kernel/constants.hpp"

#include <fmt/core.h>

namespace tpkit {

std::optional<std::string_view> constant_name(std::span<const NamedConstant> table,
                                              std::uint64_t value)
{
    for (const NamedConstant& c : table)
        if (c.value == value)
            return c.name;
    return std::nullopt;
}

std::string flag_names(std::span<const NamedConstant> table, std::uint64_t flags)
{
    std::string text;
    std::uint64_t unnamed = 0;
    for (int bit = 0; bit < 64; bit++) {
        std::uint64_t mask = std::uint64_t(1) << bit;
        if (!(flags & mask))
            continue;
        if (auto name = constant_name(table, mask)) {
            if (!text.empty())
                text += '|';
            text += *name;
        } else {
            unnamed |= mask;
        }
    }
    if (unnamed)
        text += fmt::format("{}{:#x}", text.empty() ? "" : "|", unnamed);
    return text.empty() ? "0" : text;
}

} // namespace tpkit
