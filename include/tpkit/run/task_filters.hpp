// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The common task filters (-p, -t, -u, --cgroup, --comm, --cpu, --include-self): the tasks and
// cgroups they name, checked and looked up, and written into a skeleton's rodata.
#pragma once

#include "tpkit/cli/cli.hpp"

#include <cstdint>
#include <string>

namespace tpkit {

// Where cgroup v2 is mounted ("" when nowhere).
std::string cgroup2_mount();

// The cgroup v2 ID of --cgroup PATH (what bpf_get_current_cgroup_id() returns): a directory
// of a cgroup2 mount, else Error(usage) saying where cgroup v2 is mounted, if anywhere.
std::uint64_t cgroup_id(const std::string& path);

// -p and -t name a process and a thread that exist now, else Error(unknown_target): a filter
// on a task already gone (or on a thread's ID given as -p) would silently show nothing.
void require_target_tasks(const CommonOptions& options);

// --cpu as rodata: UINT32_MAX for none; a CPU this machine does not have → Error(unknown_target).
std::uint32_t target_cpu(const CommonOptions& options);

// The process left out as rodata: this one's, unless --include-self or the tool has no task
// filters; 0 for none.
std::uint32_t excluded_tgid(const CommonOptions& options);

// The common task filters (-p, -t, -u, --cgroup, --comm, --cpu, --include-self) into a
// skeleton's rodata (bpf/include/tpkit/task.bpf.h), before load.
template <class Skel>
void apply_task_filters(Skel& skel, const CommonOptions& options)
{
    require_target_tasks(options);
    skel.rodata->tpkit_target_tgid = options.pid;
    skel.rodata->tpkit_target_tid = options.tid;
    skel.rodata->tpkit_target_uid = options.uid.value_or(UINT32_MAX);
    skel.rodata->tpkit_target_cgroup = options.cgroup.empty() ? 0 : cgroup_id(options.cgroup);
    copy_comm(options.comm, skel.rodata->tpkit_target_comm);
    skel.rodata->tpkit_target_cpu = target_cpu(options);
    skel.rodata->tpkit_excluded_tgid = excluded_tgid(options);
}

} // namespace tpkit
