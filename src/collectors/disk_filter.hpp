// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What bitesize and biopattern share: no option but the common ones and -d DISK, and a skeleton
// opened with the task filters and the disk's (block.bpf.h's tpkit_request_selected()).
#pragma once

#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include <tpkit/run/block.hpp>
#include <tpkit/run/task_filters.hpp>

#include <string>

namespace tpkit::disk_filter {

struct Options {
    std::string disk;
};

// -d (after the common options).
inline void add_options(Cli& cli, Options& options)
{
    cli.add_disk(options.disk);
}

// Skel opened, its task filters and -d applied: ready for the tool's own map sizes and load.
template <class Skel>
Skeleton<Skel> open(const Cli& cli, const Options& options)
{
    auto skel = Skeleton<Skel>::open(cli.name());
    apply_task_filters(*skel, cli.options());
    apply_disk_filter(*skel, options.disk);
    return skel;
}

} // namespace tpkit::disk_filter
