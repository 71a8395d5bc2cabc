// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "bpf_visibility.hpp"

#include "kit_switches.skel.h"

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

namespace tpkit::live {

namespace {

// The thread's context switches so far (voluntary and not), from /proc; nothing when it is gone.
std::optional<std::uint64_t> switches_of(pid_t tid)
{
    std::ifstream status("/proc/" + std::to_string(tid) + "/status");
    if (!status)
        return std::nullopt;
    std::uint64_t total = 0;
    for (std::string line; std::getline(status, line);)
        if (line.find("ctxt_switches:") != std::string::npos)
            total += std::stoull(line.substr(line.find(':') + 1));
    return total;
}

} // namespace

std::optional<bool> bpf_sees_thread(pid_t tid)
{
    using namespace std::chrono_literals;
    std::unique_ptr<kit_switches_bpf, void (*)(kit_switches_bpf*)> skel(kit_switches_bpf::open(),
                                                                        &kit_switches_bpf::destroy);
    if (!skel)
        return std::nullopt;
    skel->rodata->watched_tid = static_cast<std::uint32_t>(tid);
    if (kit_switches_bpf::load(skel.get()) != 0 || kit_switches_bpf::attach(skel.get()) != 0)
        return std::nullopt;
    const auto before = switches_of(tid);
    for (int i = 0; i < 50 && before; i++) {
        std::this_thread::sleep_for(100ms);
        const auto now = switches_of(tid);
        if (!now)
            return std::nullopt;
        if (skel->bss->switches)
            return true;
        // Two switches, so that one begun before the program was attached does not count.
        if (*now >= *before + 2)
            return skel->bss->switches != 0;
    }
    return std::nullopt;
}

} // namespace tpkit::live
