// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The --by keys of the generic engines (bpf/include/tpkit/engine.bpf.h) read back as labels: one
// per part of the key, stacks symbolized (kernel frames by kallsyms, user frames by the ELF
// symbols of the process's mapped files), and with a pid and no comm in the key, the process's
// comm after the pid (histogram headings "pid = 181 bash").
#pragma once

#include <tpkit/bpf/maps.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/output/metrics.hpp>
#include <tpkit/run/stack_symbolizer.hpp>
#include <tpkit/support/error.hpp>

#include <bpf/libbpf.h>

#include <cstdint>
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

    // tool: for lines on stderr. The maps of the skeleton that takes the keys, loaded.
    template <class Skel>
    EngineKeyLabels(std::string tool, const KeyChoice& key, Skel& skel)
        : EngineKeyLabels(std::move(tool), key, bpf_map__fd(skel.maps.tpkit_stacks),
                          skel.maps.tpkit_stack_errors,
                          skel.rodata->tpkit_key_pid_comms ? bpf_map__fd(skel.maps.tpkit_pid_comms)
                                                           : -1)
    {
    }

    // One label per part of the key, in --by order; the comm after a pid when kept.
    std::vector<Label> labels(const tpkit_engine_key& k, const EventFormat& format);

    // After the keys of an interval: forgets what was read of processes (their mappings, the
    // comms kept for them), which may exec or exit, and says on stderr how many stacks could
    // not be recorded.
    void end_interval();

private:
    // pid_comms: the map of kept comms, or -1.
    EngineKeyLabels(std::string tool, const KeyChoice& key, int stacks, bpf_map* stack_errors,
                    int pid_comms);

    // The comm BPF kept for the process, else its comm now, else empty.
    std::string comm_of(std::uint32_t pid);

    std::string tool_;
    const KeyChoice& key_;
    StackSymbolizer symbolizer_;
    CounterWatch stack_errors_;
    int pid_comms_;
    std::vector<std::uint32_t> comms_read_;
};

} // namespace tpkit
