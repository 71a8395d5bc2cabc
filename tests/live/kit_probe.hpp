// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A test BPF program of the kit (tests/bpf/kit_*.bpf.c) loaded in this process and attached, its
// records taken through the kit's transport (emit.bpf.h) exactly as they arrive.
#pragma once

#include "tool_run.hpp"

#include "tpkit/bpf/transport.hpp"
#include "tpkit/kernel/tracefs.hpp"

#include <bpf/libbpf.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tpkit::live {

template <class Skel>
class KitProbe {
public:
    // configure: the program's own rodata and map sizes, before load. open_options: libbpf's,
    // e.g. another kernel BTF for CO-RE (btf_custom_path).
    KitProbe(const std::string& name, Transport transport, const std::function<void(Skel&)>& configure = {},
             const bpf_object_open_opts* open_options = nullptr)
        : skel_(Skel::open(open_options), &Skel::destroy)
    {
        if (!skel_)
            throw std::runtime_error("cannot open " + name);
        tracefs_root(); // classic tracepoints: libbpf reads their IDs there
        configure_transport(*skel_, transport);
        if (configure)
            configure(*skel_);
        if (Skel::load(skel_.get()) != 0)
            throw std::runtime_error("cannot load " + name);
        // Before attaching: a perf buffer has nowhere to write until it exists.
        reader_ = std::make_unique<EventReader>(
            transport_maps(*skel_), transport,
            [this](std::span<const std::byte> data) { records_.emplace_back(data.begin(), data.end()); });
        if (Skel::attach(skel_.get()) != 0)
            throw std::runtime_error("cannot attach " + name);
    }

    Skel& skel() { return *skel_; }

    // Every record so far, as sent (the events' order is kept per CPU).
    const std::vector<std::vector<std::byte>>& records()
    {
        reader_->poll(std::chrono::milliseconds(10));
        return records_;
    }

    // The records as run_stream reads them: each into a zeroed Event, at most sizeof(Event).
    template <class Event>
    std::vector<Event> events()
    {
        std::vector<Event> events;
        for (const auto& r : records()) {
            Event e{};
            std::memcpy(&e, r.data(), std::min(r.size(), sizeof(e)));
            events.push_back(e);
        }
        return events;
    }

    std::uint64_t lost() const { return reader_->lost(); }

private:
    std::unique_ptr<Skel, void (*)(Skel*)> skel_;
    std::unique_ptr<EventReader> reader_;
    std::vector<std::vector<std::byte>> records_;
};

// Whether thread tid of this process is blocked in syscall nr now: /proc names the syscall only
// of a thread that is off the CPU.
inline bool blocked_in_syscall(pid_t tid, long nr)
{
    std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/syscall");
    long current = -1;
    return f >> current && current == nr;
}

// Polls done() every millisecond until it holds (true) or timeout passes (false), a timeout
// stretched for slow machines (patient()).
inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout)
{
    auto deadline = std::chrono::steady_clock::now() + patient(timeout);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

} // namespace tpkit::live
