// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Event transport from BPF to user space: one reader over a BPF ring buffer or a perf buffer,
// matching bpf/include/tpkit/emit.bpf.h (maps tpkit_ringbuf, tpkit_perfbuf, tpkit_drops).
#pragma once

#include <bpf/libbpf.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

namespace tpkit {

enum class Transport { ring_buffer, perf_buffer };

// The perf buffer when asked for, or when this kernel has no BPF ring buffer.
Transport choose_transport(bool perf_buffer_requested);

const char* transport_name(Transport transport);

// The maps every streaming BPF object defines for emit.bpf.h.
struct TransportMaps {
    bpf_map* ringbuf;
    bpf_map* perfbuf;
    bpf_map* drops;
};

template <class Skel>
TransportMaps transport_maps(Skel& skel)
{
    return {skel.maps.tpkit_ringbuf, skel.maps.tpkit_perfbuf, skel.maps.tpkit_drops};
}

// Before load: sizes the maps for the chosen transport. The unused ring buffer becomes a tiny
// array so the object still loads on kernels without ring buffers (its code is dead there).
void configure_transport(const TransportMaps& maps, Transport transport);

template <class Skel>
void configure_transport(Skel& skel, Transport transport)
{
    skel.rodata->tpkit_use_perf_buffer = transport == Transport::perf_buffer;
    configure_transport(transport_maps(skel), transport);
}

// After load: delivers every record to the handler, and counts what was lost on the way.
class EventReader {
public:
    using Handler = std::function<void(std::span<const std::byte>)>;

    EventReader(const TransportMaps& maps, Transport transport, Handler handler);
    ~EventReader();
    EventReader(const EventReader&) = delete;
    EventReader& operator=(const EventReader&) = delete;

    // Waits at most `timeout`, then delivers everything that has arrived. The ring buffer is
    // written without wake-ups, so the timeout is the latency to the screen.
    void poll(std::chrono::milliseconds timeout);

    // Records lost so far: ring- or perf-buffer writes that failed, counted in BPF. Create the
    // reader before attaching: a perf buffer has nowhere to write until it exists.
    std::uint64_t lost() const;

    Transport transport() const { return transport_; }

private:
    static int on_ring_record(void* self, void* data, std::size_t size);
    static void on_perf_record(void* self, int cpu, void* data, std::uint32_t size);

    Transport transport_;
    Handler handler_;
    bpf_map* drops_;
    ring_buffer* ring_ = nullptr;
    perf_buffer* perf_ = nullptr;
};

} // namespace tpkit
