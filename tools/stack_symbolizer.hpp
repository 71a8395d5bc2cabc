// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Stacks recorded by bpf_get_stackid() in a BPF_MAP_TYPE_STACK_TRACE map, as frame names: what
// offcputime (kernel and user stacks) and tcpdrop -s (kernel stacks) print.
#pragma once

#include <tpkit/kernel/symbols.hpp>
#include <tpkit/support/json.hpp>

#include <bpf/bpf.h>

#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
    void load_kernel_symbols()
    {
        if (!kernel_)
            kernel_.emplace(reading_ ? reading_->take() : tpkit::KernelSymbols());
    }

    // Kernel symbols from a reading started earlier (a tool that keeps its capabilities starts
    // it when it attaches, so that it is done by the time the stacks print).
    void read_kernel_symbols_from(tpkit::KernelSymbolsInBackground reading) { reading_.emplace(std::move(reading)); }

    std::vector<std::string> kernel(int id)
    {
        bool leading = true;
        return frames(id, "[Missed Kernel Stack]", [&](std::uint64_t ip) -> std::optional<std::string> {
            load_kernel_symbols();
            // Each frame is a return address (the first too: the tracepoint's caller), named
            // as the kernel's own stack traces name it.
            auto symbol = kernel_->find_return_address(ip);
            // The stack is taken inside the tool's own program: its first frames are the BPF
            // program and the tracepoint's machinery, not the traced code's.
            if (leading && symbol && tracing_frame(*symbol))
                return std::nullopt;
            leading = false;
            return tpkit::frame_text(symbol, offsets_);
        });
    }
    std::vector<std::string> user(int id, pid_t pid)
    {
        return frames(id, "[Missed User Stack]", [&](std::uint64_t ip) -> std::optional<std::string> {
            return tpkit::frame_text(user_.find(pid, ip), offsets_);
        });
    }
    // Reads processes' mappings again (they exec, dlopen, exit and their pids are reused).
    void forget_processes() { user_ = {}; }
    // Stacks that could not be recorded (the stack map full, or a hash collision in it).
    std::uint64_t missed() const { return missed_; }

private:
    static bool tracing_frame(const tpkit::Symbol& s)
    {
        return s.module == "bpf" || s.name.starts_with("bpf_trace_run") ||
               s.name.starts_with("__bpf_trace_") || s.name.starts_with("__traceiter_") ||
               s.name.starts_with("perf_trace_");
    }

    template <class Name>
    std::vector<std::string> frames(int id, const char* missed_text, Name name)
    {
        // -EFAULT: no stack to walk (a user stack of a task without one), not a loss.
        if (id == no_stack_ || id == -EFAULT)
            return {};
        std::vector<std::uint64_t> ips(max_depth_);
        if (id < 0 || bpf_map_lookup_elem(stacks_fd_, &id, ips.data()) != 0) {
            missed_++;
            return {missed_text};
        }
        std::vector<std::string> out;
        for (std::uint64_t ip : ips)
            if (ip)
                if (auto text = name(ip))
                    out.push_back(std::move(*text));
        return out;
    }

    int stacks_fd_;
    std::size_t max_depth_;
    int no_stack_;
    bool offsets_;
    std::optional<tpkit::KernelSymbols> kernel_; // read at the first kernel frame
    std::optional<tpkit::KernelSymbolsInBackground> reading_;
    tpkit::UserSymbols user_;
    std::uint64_t missed_ = 0;
};
