// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Stacks recorded by bpf_get_stackid() in a BPF_MAP_TYPE_STACK_TRACE map, as frame names: what
// offcputime (kernel and user stacks), tcpdrop -s (kernel stacks) and the engines' --by kstack
// and ustack print.
#pragma once

#include "tpkit/kernel/symbols.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpkit {

class StackSymbolizer {
public:
    // `max_depth`: the map's frames per stack; `no_stack`: the ID a program records for a stack
    // it did not take (not a loss).
    StackSymbolizer(int stacks_fd, std::size_t max_depth, int no_stack, bool offsets)
        : stacks_fd_(stacks_fd), max_depth_(max_depth), no_stack_(no_stack), offsets_(offsets)
    {
    }

    // /proc/kallsyms shows addresses to an opener with CAP_SYSLOG only: a tool that drops its
    // capabilities once attached reads it before.
    void load_kernel_symbols();

    // Kernel symbols from a reading started earlier (a tool that keeps its capabilities starts
    // it when it attaches, so that it is done by the time the stacks print).
    void read_kernel_symbols_from(KernelSymbolsInBackground reading)
    {
        reading_.emplace(std::move(reading));
    }

    std::vector<std::string> kernel(int id);
    std::vector<std::string> user(int id, pid_t pid);
    // Reads processes' mappings again (they exec, dlopen, exit and their pids are reused).
    void forget_processes() { user_ = {}; }
    // Says on stderr how many more stacks could not be recorded (the stack map full, or a hash
    // collision in it) since the last call: "TOOL: N stacks could not be recorded (raise
    // --stack-storage-size)".
    void report_missed(std::string_view tool);

private:
    // The frames of stack `id`, each address named by `name` (nullopt: left out).
    template <class Name>
    std::vector<std::string> frames(int id, const char* missed_text, Name name);

    int stacks_fd_;
    std::size_t max_depth_;
    int no_stack_;
    bool offsets_;
    std::optional<KernelSymbols> kernel_; // read at the first kernel frame
    std::optional<KernelSymbolsInBackground> reading_;
    UserSymbols user_;
    std::uint64_t missed_ = 0;
    std::uint64_t missed_reported_ = 0;
};

} // namespace tpkit
