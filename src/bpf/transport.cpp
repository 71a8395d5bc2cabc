// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/bpf/transport.hpp"

#include "tpkit/bpf/maps.hpp"
#include "tpkit/bpf/skeleton.hpp"
#include "tpkit/limits.h"
#include "tpkit/support/error.hpp"

#include <bpf/bpf.h>

#include <cerrno>
#include <vector>

namespace tpkit {
namespace {

constexpr std::size_t perf_buffer_pages = 64; // per CPU

} // namespace

Transport choose_transport(bool perf_buffer_requested)
{
    if (perf_buffer_requested || !kernel_has_ringbuf())
        return Transport::perf_buffer;
    return Transport::ring_buffer;
}

const char* transport_name(Transport transport)
{
    return transport == Transport::ring_buffer ? "ring buffer" : "perf buffer";
}

void configure_transport(const TransportMaps& maps, Transport transport)
{
    if (transport == Transport::ring_buffer) {
        check_libbpf(bpf_map__set_max_entries(maps.ringbuf, TPKIT_RINGBUF_BYTES),
                     "cannot size the ring buffer");
        return;
    }
    const char* what = "cannot shrink the unused ring buffer";
    check_libbpf(bpf_map__set_type(maps.ringbuf, BPF_MAP_TYPE_ARRAY), what);
    check_libbpf(bpf_map__set_key_size(maps.ringbuf, sizeof(std::uint32_t)), what);
    check_libbpf(bpf_map__set_value_size(maps.ringbuf, sizeof(std::uint32_t)), what);
    check_libbpf(bpf_map__set_max_entries(maps.ringbuf, 1), what);
}

EventReader::EventReader(const TransportMaps& maps, Transport transport, Handler handler)
    : transport_(transport), handler_(std::move(handler)), drops_(maps.drops)
{
    if (transport == Transport::ring_buffer) {
        ring_ = ring_buffer__new(bpf_map__fd(maps.ringbuf), &on_ring_record, this, nullptr);
        if (!ring_)
            throw_libbpf_error(Exit::failure, "cannot open the ring buffer", errno);
        return;
    }
    perf_ = perf_buffer__new(bpf_map__fd(maps.perfbuf), perf_buffer_pages, &on_perf_record,
                             nullptr, this, nullptr);
    if (!perf_)
        throw_libbpf_error(Exit::failure, "cannot open the perf buffer", errno);
}

EventReader::~EventReader()
{
    ring_buffer__free(ring_);
    perf_buffer__free(perf_);
}

void EventReader::poll(std::chrono::milliseconds timeout)
{
    int err;
    if (ring_) {
        err = ring_buffer__poll(ring_, static_cast<int>(timeout.count()));
        if (err >= 0)
            err = ring_buffer__consume(ring_);
    } else {
        err = perf_buffer__poll(perf_, static_cast<int>(timeout.count()));
    }
    if (err < 0 && err != -EINTR)
        throw_libbpf_error(Exit::failure, "reading events failed", err);
}

std::uint64_t EventReader::lost() const
{
    return sum_percpu_u64(drops_);
}

int EventReader::on_ring_record(void* self, void* data, std::size_t size)
{
    static_cast<EventReader*>(self)->handler_({static_cast<const std::byte*>(data), size});
    return 0;
}

void EventReader::on_perf_record(void* self, int, void* data, std::uint32_t size)
{
    static_cast<EventReader*>(self)->handler_({static_cast<const std::byte*>(data), size});
}

} // namespace tpkit
