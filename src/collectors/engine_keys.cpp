// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/engine_keys.hpp"

#include <tpkit/limits.h>

#include <bpf/bpf.h>
#include <fmt/core.h>

#include <cstring>
#include <fstream>
#include <utility>

namespace tpkit {

EngineKeyLabels::EngineKeyLabels(std::string tool, const KeyChoice& key, int stacks,
                                 bpf_map* stack_errors, int pid_comms)
    : tool_(std::move(tool)), key_(key),
      symbolizer_(stacks, TPKIT_STACK_DEPTH, TPKIT_NO_STACK, false), stack_errors_(stack_errors),
      pid_comms_(pid_comms)
{
    // Before the tool drops its capabilities: kallsyms shows addresses to CAP_SYSLOG only.
    if (key.has(TPKIT_KEY_KSTACK))
        symbolizer_.load_kernel_symbols();
}

std::vector<Label> EngineKeyLabels::labels(const tpkit_engine_key& k, const EventFormat& format)
{
    std::vector<Label> labels;
    for (tpkit_key_source part : key_.parts) {
        if (part == TPKIT_KEY_KSTACK)
            labels.push_back(stack_label("kstack", symbolizer_.kernel(k.kernel_stack_id)));
        else if (part == TPKIT_KEY_USTACK)
            labels.push_back(
                stack_label("ustack", symbolizer_.user(k.user_stack_id, static_cast<pid_t>(k.pid))));
        else
            labels.push_back({key_.name(part), key_text(k, key_, part, format),
                              key_is_number(key_, part, format)});
        if (part == TPKIT_KEY_PID && pid_comms_ >= 0)
            labels.push_back({"comm", comm_of(k.pid)});
    }
    return labels;
}

void EngineKeyLabels::end_interval()
{
    symbolizer_.forget_processes();
    for (std::uint32_t pid : comms_read_)
        bpf_map_delete_elem(pid_comms_, &pid);
    comms_read_.clear();
    if (std::uint64_t n = stack_errors_.increase())
        fmt::print(stderr, "{}: {} stacks could not be recorded: the stack map is full or two "
                   "stacks collided (see --stack-storage-size); counted as [Missed … Stack]\n",
                   tool_, n);
}

std::string EngineKeyLabels::comm_of(std::uint32_t pid)
{
    char comm[TPKIT_COMM_LEN] = {};
    if (bpf_map_lookup_elem(pid_comms_, &pid, comm) == 0) {
        comms_read_.push_back(pid);
        return std::string(comm, strnlen(comm, sizeof(comm)));
    }
    std::string now;
    std::ifstream file(fmt::format("/proc/{}/comm", pid));
    std::getline(file, now);
    return now;
}

} // namespace tpkit
