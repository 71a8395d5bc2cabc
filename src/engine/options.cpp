// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The engines' own options.
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

void add_classic_option(Cli& cli, bool& classic)
{
    cli.flag("--classic", classic,
             "attach syscalls:* events to their own tracepoints, not through raw_syscalls");
}

void add_stack_storage_option(Cli& cli, std::uint32_t& stacks)
{
    cli.option("--stack-storage-size", stacks,
               fmt::format("distinct stacks kept for the whole run (default {})", stacks))
        .range(1u, 1u << 24);
}

void add_stack_depth_option(Cli& cli, std::uint32_t& depth, std::uint32_t most, std::string_view which)
{
    cli.option("--perf-max-stack-depth", depth,
               fmt::format("frames kept of {} (default and most {})", which, most))
        .range(1u, most);
}

void size_stack_map(bpf_map* map, std::uint32_t stacks, std::uint32_t depth)
{
    check_libbpf(bpf_map__set_max_entries(map, stacks), "cannot size the stack map");
    check_libbpf(bpf_map__set_value_size(map, depth * sizeof(std::uint64_t)),
                 "cannot size the stack map's stacks");
}

} // namespace tpkit
