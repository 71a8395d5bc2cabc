// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "bpf_visibility.hpp"

#include "kit_switches.skel.h"
#include "tool_run.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>

namespace tpkit::live {

namespace {

// A number from a line of /proc/TID/status ("Tgid:", "voluntary_ctxt_switches:", …), summed
// over the lines holding `field`; nothing when the file is gone.
std::optional<std::uint64_t> status_figure(const std::string& path, const std::string& field)
{
    std::ifstream status(path);
    if (!status)
        return std::nullopt;
    std::uint64_t total = 0;
    for (std::string line; std::getline(status, line);)
        if (line.find(field) != std::string::npos)
            total += std::stoull(line.substr(line.find(':') + 1));
    return total;
}

// The context switches of every thread of process `tgid` so far; nothing when it is gone.
std::optional<std::uint64_t> switches_of_process(pid_t tgid)
{
    std::error_code ec;
    std::optional<std::uint64_t> total;
    for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(tgid) + "/task", ec))
        if (auto n = status_figure(task.path().string() + "/status", "ctxt_switches:"))
            total = total.value_or(0) + *n;
    return total;
}

} // namespace

std::optional<bool> bpf_sees_thread(pid_t tid)
{
    using namespace std::chrono_literals;
    const auto tgid = status_figure("/proc/" + std::to_string(tid) + "/status", "Tgid:");
    if (!tgid)
        return std::nullopt;
    static std::map<pid_t, bool> known;
    if (auto it = known.find(pid_t(*tgid)); it != known.end())
        return it->second;
    std::unique_ptr<kit_switches_bpf, void (*)(kit_switches_bpf*)> skel(kit_switches_bpf::open(),
                                                                        &kit_switches_bpf::destroy);
    if (!skel)
        return std::nullopt;
    skel->rodata->watched_tgid = static_cast<std::uint32_t>(*tgid);
    if (kit_switches_bpf::load(skel.get()) != 0 || kit_switches_bpf::attach(skel.get()) != 0)
        return std::nullopt;
    const auto before = switches_of_process(pid_t(*tgid));
    const auto deadline = std::chrono::steady_clock::now() + patient(10s);
    while (before && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(50ms);
        const auto now = switches_of_process(pid_t(*tgid));
        if (!now)
            return std::nullopt;
        // Two switches, so that one begun before the program was attached does not count.
        if (skel->bss->switches || *now >= *before + 2)
            return known[pid_t(*tgid)] = skel->bss->switches != 0;
    }
    return std::nullopt;
}

} // namespace tpkit::live
