// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/maps.hpp"

#include "tpkit/error.hpp"

#include <bpf/bpf.h>
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <string>
#include <utility>

namespace tpkit {
namespace {

// Per-CPU values of __u64 arrays as the kernel returns them: one array per possible CPU.
class PercpuValues {
public:
    explicit PercpuValues(bpf_map* map)
        : per_cpu_(bpf_map__value_size(map) / sizeof(std::uint64_t))
    {
        int cpus = libbpf_num_possible_cpus();
        if (cpus <= 0)
            throw_libbpf_error(Exit::failure, "cannot count CPUs", cpus);
        cpus_ = static_cast<std::size_t>(cpus);
        values_.resize(per_cpu_ * cpus_);
    }

    void* data() { return values_.data(); }

    std::vector<std::uint64_t> sum() const
    {
        std::vector<std::uint64_t> total(per_cpu_);
        for (std::size_t cpu = 0; cpu < cpus_; cpu++)
            for (std::size_t i = 0; i < per_cpu_; i++)
                total[i] += values_[cpu * per_cpu_ + i];
        return total;
    }

private:
    std::size_t per_cpu_;
    std::size_t cpus_ = 0;
    std::vector<std::uint64_t> values_;
};

[[noreturn]] void throw_read_error(bpf_map* map)
{
    throw_libbpf_error(Exit::failure, "cannot read map " + std::string(bpf_map__name(map)), errno);
}

} // namespace

std::vector<KeyedCounters> drain_percpu_counters(bpf_map* map)
{
    const int fd = bpf_map__fd(map);
    const std::size_t key_size = bpf_map__key_size(map);

    // Collect the keys first: deleting while walking would restart the walk.
    std::vector<std::vector<std::byte>> keys;
    std::vector<std::byte> key(key_size), next(key_size);
    const void* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, next.data()) == 0) {
        keys.push_back(next);
        key = next;
        prev = key.data();
    }

    std::vector<KeyedCounters> result;
    PercpuValues values(map);
    for (auto& k : keys) {
        if (bpf_map_lookup_and_delete_elem(fd, k.data(), values.data()) != 0) {
            if (errno == ENOENT)
                continue;
            throw_read_error(map);
        }
        result.push_back({std::move(k), values.sum()});
    }
    return result;
}

SwappedMap::SwappedMap(bpf_map* slot, bpf_map* first, bpf_map* second)
    : slot_(slot), halves_{first, second}
{
}

void SwappedMap::set_max_entries(std::uint32_t keys)
{
    for (bpf_map* half : halves_)
        if (int err = bpf_map__set_max_entries(half, keys))
            throw_libbpf_error(Exit::failure, "cannot size map " + std::string(bpf_map__name(half)), err);
}

void SwappedMap::share(const SwappedMap& other)
{
    auto reuse = [](bpf_map* from, bpf_map* into) {
        if (int err = bpf_map__reuse_fd(into, bpf_map__fd(from)))
            throw_libbpf_error(Exit::kernel_refused,
                               "cannot share map " + std::string(bpf_map__name(from)), err);
    };
    reuse(other.slot_, slot_);
    reuse(other.halves_[0], halves_[0]);
    reuse(other.halves_[1], halves_[1]);
}

void SwappedMap::leave_out()
{
    for (bpf_map* map : {slot_, halves_[0], halves_[1]})
        if (int err = bpf_map__set_autocreate(map, false))
            throw_libbpf_error(Exit::failure, "cannot leave out map " + std::string(bpf_map__name(map)), err);
}

std::vector<KeyedCounters> SwappedMap::drain()
{
    const unsigned next = 1 - active_;
    const std::uint32_t zero = 0;
    const int next_fd = bpf_map__fd(halves_[next]);
    if (bpf_map_update_elem(bpf_map__fd(slot_), &zero, &next_fd, BPF_ANY) != 0)
        throw_libbpf_error(Exit::failure, "cannot switch map " + std::string(bpf_map__name(slot_)), errno);
    bpf_map* drained = halves_[active_];
    active_ = next;
    return drain_percpu_counters(drained);
}

std::vector<std::vector<std::uint64_t>> sum_percpu_array(bpf_map* map)
{
    const int fd = bpf_map__fd(map);
    PercpuValues values(map);
    std::vector<std::vector<std::uint64_t>> result;
    for (std::uint32_t key = 0; key < bpf_map__max_entries(map); key++) {
        if (bpf_map_lookup_elem(fd, &key, values.data()) != 0)
            throw_read_error(map);
        result.push_back(values.sum());
    }
    return result;
}

std::vector<std::vector<std::uint64_t>> ArrayGrowth::increase()
{
    auto totals = sum_percpu_array(map_);
    seen_.resize(totals.size());
    std::vector<std::vector<std::uint64_t>> growth(totals.size());
    for (std::size_t key = 0; key < totals.size(); key++) {
        seen_[key].resize(totals[key].size(), 0);
        for (std::size_t i = 0; i < totals[key].size(); i++)
            growth[key].push_back(totals[key][i] - std::exchange(seen_[key][i], totals[key][i]));
    }
    return growth;
}

std::uint64_t CounterWatch::increase()
{
    std::uint64_t now = sum_percpu_u64(counter_);
    return now - std::exchange(seen_, now);
}

std::uint64_t MissedWatch::report()
{
    const std::uint64_t n = counter_.increase();
    if (n)
        fmt::print(stderr, "{}: {} events not counted: {}\n", tool_, n, reason_);
    return n;
}

std::uint64_t sum_percpu_u64(bpf_map* map)
{
    PercpuValues values(map);
    std::uint32_t key = 0;
    if (bpf_map_lookup_elem(bpf_map__fd(map), &key, values.data()) != 0)
        throw_read_error(map);
    return values.sum().at(0);
}

namespace {

constexpr std::uint64_t round8(std::uint64_t n) { return (n + 7) & ~std::uint64_t(7); }

// struct htab_elem before its key: hash-list node, free-list/LRU node, hash, and the per-CPU
// pointer or padding (kernel/bpf/hashtab.c).
constexpr std::uint64_t hash_element_header = 48;

std::uint64_t limit_from_options = 0;
std::uint64_t charged_bytes = 0;

std::uint64_t memory_available()
{
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:")
            return kib * 1024;
    return 0;
}

} // namespace

std::uint64_t map_memory_bytes(bpf_map_type type, std::uint32_t max_entries,
                               std::uint32_t key_size, std::uint32_t value_size,
                               unsigned possible_cpus)
{
    const std::uint64_t entries = max_entries;
    const std::uint64_t key = round8(key_size), value = round8(value_size);
    switch (type) {
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
        return entries * (hash_element_header + key + sizeof(void*) + value * possible_cpus);
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_HASH_OF_MAPS:
        return entries * (hash_element_header + key + value);
    case BPF_MAP_TYPE_PERCPU_ARRAY:
        return entries * value * possible_cpus;
    case BPF_MAP_TYPE_RINGBUF:
        return entries;
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
    case BPF_MAP_TYPE_ARRAY_OF_MAPS:
        return entries * sizeof(void*);
    default:
        return entries * (key + value);
    }
}

void set_map_memory_limit(std::uint64_t bytes) { limit_from_options = bytes; }

std::uint64_t map_memory_limit()
{
    if (limit_from_options)
        return limit_from_options;
    constexpr std::uint64_t default_limit = std::uint64_t(1) << 30;
    std::uint64_t available = memory_available();
    return available ? std::min(default_limit, available / 2) : default_limit;
}

void charge_map_memory(bpf_object* obj, std::string_view what)
{
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0)
        throw_libbpf_error(Exit::failure, "cannot count CPUs", cpus);
    std::uint64_t bytes = 0;
    bpf_map* map;
    bpf_object__for_each_map(map, obj) {
        // A map given an fd before load is another object's, already counted there.
        if (bpf_map__fd(map) >= 0 || !bpf_map__autocreate(map))
            continue;
        bytes += map_memory_bytes(bpf_map__type(map), bpf_map__max_entries(map),
                                  bpf_map__key_size(map), bpf_map__value_size(map),
                                  static_cast<unsigned>(cpus));
    }
    const std::uint64_t limit = map_memory_limit();
    if (charged_bytes + bytes > limit)
        throw Error(Exit::usage,
                    fmt::format("the maps of {} would take {} of kernel memory on {} CPUs, more "
                                "than the limit of {}{}: ask for fewer keys (--max-keys) or raise "
                                "--max-map-memory",
                                what, format_bytes(charged_bytes + bytes), cpus,
                                format_bytes(limit),
                                limit_from_options ? "" : " (1 GiB or half the available memory)"));
    charged_bytes += bytes;
}

std::string format_bytes(std::uint64_t bytes)
{
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    std::size_t unit = 0;
    while (value >= 1024 && unit + 1 < std::size(units)) {
        value /= 1024;
        unit++;
    }
    return unit == 0 ? fmt::format("{} bytes", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

} // namespace tpkit
