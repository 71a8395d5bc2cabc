// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The --by keys of the generic engines (bpf/include/tpkit/engine.bpf.h) read back as labels: one
// per part of the key, stacks symbolized (kernel frames by kallsyms, user frames by the ELF
// symbols of the process's mapped files), and with a pid and no comm in the key, the process's
// comm after the pid (histogram headings "pid = 181 bash").
#pragma once

#include <tpkit/run/stack_symbolizer.hpp>

#include <tpkit/bpf/maps.hpp>
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/output/metrics.hpp>

#include <bpf/bpf.h>
#include <fmt/core.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace tpkit {

class EngineKeyLabels {
public:
    // Before load: the stack map of a skeleton whose program has engine.bpf.h's maps holds
    // `stacks` distinct stacks when KEY has one (else one entry), and with `pid_comms`, the
    // comms of up to `keys` processes of a key with a pid and no comm are kept for the headings.
    template <class Skel>
    static void configure(Skel& skel, const KeyChoice& key, std::uint32_t stacks, bool pid_comms,
                          std::uint32_t keys)
    {
        check_libbpf(bpf_map__set_max_entries(skel.maps.tpkit_stacks, key.has_stack() ? stacks : 1),
                     "cannot size the stack map");
        bool comms = pid_comms && key.has(TPKIT_KEY_PID) && !key.has(TPKIT_KEY_COMM);
        skel.rodata->tpkit_key_pid_comms = comms;
        check_libbpf(bpf_map__set_max_entries(skel.maps.tpkit_pid_comms, comms ? keys : 1),
                     "cannot size the map of process names");
    }

    // tool: for lines on stderr. The maps of the skeleton that takes the keys.
    template <class Skel>
    EngineKeyLabels(std::string tool, const KeyChoice& key, Skel& skel)
        : tool_(std::move(tool)), key_(key),
          symbolizer_(bpf_map__fd(skel.maps.tpkit_stacks), TPKIT_STACK_DEPTH, TPKIT_NO_STACK, false),
          stack_errors_(skel.maps.tpkit_stack_errors),
          pid_comms_(skel.rodata->tpkit_key_pid_comms ? bpf_map__fd(skel.maps.tpkit_pid_comms) : -1)
    {
        // Before the tool drops its capabilities: kallsyms shows addresses to CAP_SYSLOG only.
        if (key.has(TPKIT_KEY_KSTACK))
            symbolizer_.load_kernel_symbols();
    }

    // One label per part of the key, in --by order; the comm after a pid when kept.
    std::vector<Label> labels(const tpkit_engine_key& k, const EventFormat& format)
    {
        std::vector<Label> labels;
        for (tpkit_key_source part : key_.parts) {
            if (part == TPKIT_KEY_KSTACK)
                labels.push_back(stack_label("kstack", symbolizer_.kernel(k.kernel_stack_id)));
            else if (part == TPKIT_KEY_USTACK)
                labels.push_back(stack_label(
                    "ustack", symbolizer_.user(k.user_stack_id, static_cast<pid_t>(k.pid))));
            else
                labels.push_back({key_.name(part), key_text(k, key_, part, format),
                                  key_is_number(key_, part, format)});
            if (part == TPKIT_KEY_PID && pid_comms_ >= 0)
                labels.push_back({"comm", comm_of(k.pid)});
        }
        return labels;
    }

    // After the keys of an interval: forgets what was read of processes (their mappings, the
    // comms kept for them), which may exec or exit, and says on stderr how many stacks could
    // not be recorded.
    void end_interval()
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

    std::uint64_t stack_errors() const { return stack_errors_.seen(); }

private:
    // The comm BPF kept for the process, else its comm now, else empty.
    std::string comm_of(std::uint32_t pid)
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

    std::string tool_;
    const KeyChoice& key_;
    StackSymbolizer symbolizer_;
    CounterWatch stack_errors_;
    int pid_comms_;
    std::vector<std::uint32_t> comms_read_;
};

} // namespace tpkit
