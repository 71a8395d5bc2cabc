// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/run/stack_symbolizer.hpp"

#include <bpf/bpf.h>
#include <fmt/core.h>

#include <cerrno>
#include <utility>

namespace tpkit {

namespace {

// The stack is taken inside the tool's own program: its first frames are the BPF program and
// the tracepoint's machinery, not the traced code's.
bool tracing_frame(const Symbol& s)
{
    return s.module == "bpf" || s.name.starts_with("bpf_trace_run") ||
           s.name.starts_with("__bpf_trace_") || s.name.starts_with("__traceiter_") ||
           s.name.starts_with("perf_trace_");
}

} // namespace

template <class Name>
std::vector<std::string> StackSymbolizer::frames(int id, const char* missed_text, Name name)
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

void StackSymbolizer::load_kernel_symbols()
{
    if (!kernel_)
        kernel_.emplace(reading_ ? reading_->take() : KernelSymbols());
}

std::vector<std::string> StackSymbolizer::kernel(int id)
{
    bool leading = true;
    return frames(id, "[Missed Kernel Stack]", [&](std::uint64_t ip) -> std::optional<std::string> {
        load_kernel_symbols();
        // Each frame is a return address (the first too: the tracepoint's caller), named as the
        // kernel's own stack traces name it.
        auto symbol = kernel_->find_return_address(ip);
        if (leading && symbol && tracing_frame(*symbol))
            return std::nullopt;
        leading = false;
        return frame_text(symbol, offsets_);
    });
}

std::vector<std::string> StackSymbolizer::user(int id, pid_t pid)
{
    return frames(id, "[Missed User Stack]", [&](std::uint64_t ip) -> std::optional<std::string> {
        return frame_text(user_.find(pid, ip), offsets_);
    });
}

void StackSymbolizer::report_missed(std::string_view tool)
{
    if (const std::uint64_t more = missed_ - std::exchange(missed_reported_, missed_))
        fmt::print(stderr, "{}: {} stacks could not be recorded (raise --stack-storage-size)\n", tool,
                   more);
}

} // namespace tpkit
