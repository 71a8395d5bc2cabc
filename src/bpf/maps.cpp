// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/bpf/maps.hpp"

#include "tpkit/support/error.hpp"

#include <bpf/bpf.h>
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

namespace tpkit {
namespace {

constexpr std::uint64_t round8(std::uint64_t n) { return (n + 7) & ~std::uint64_t(7); }

std::size_t count_possible_cpus()
{
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0)
        throw_libbpf_error(Exit::failure, "cannot count CPUs", cpus);
    return static_cast<std::size_t>(cpus);
}

bool has_value_per_cpu(bpf_map_type type)
{
    switch (type) {
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
        return true;
    default:
        return false;
    }
}

// How the kernel hands user space one key's value of a map whose values are arrays of __u64
// counters: a per-CPU map as one copy per possible CPU, each rounded up to 8 bytes; any other
// map as its one value. Lookups write that many bytes, and batches put keys' values that far
// apart.
class CounterValueLayout {
public:
    explicit CounterValueLayout(bpf_map* map)
        : counters_(bpf_map__value_size(map) / sizeof(std::uint64_t))
    {
        const std::size_t value_size = bpf_map__value_size(map);
        if (has_value_per_cpu(bpf_map__type(map))) {
            copies_ = count_possible_cpus();
            copy_bytes_ = round8(value_size);
        } else {
            copies_ = 1;
            copy_bytes_ = value_size;
        }
    }

    std::size_t bytes() const { return copies_ * copy_bytes_; }

    // The counters of the value at VALUE (bytes() long), summed over its copies.
    std::vector<std::uint64_t> sum(const std::byte* value) const
    {
        std::vector<std::uint64_t> total(counters_);
        for (std::size_t copy = 0; copy < copies_; copy++, value += copy_bytes_)
            for (std::size_t i = 0; i < counters_; i++) {
                std::uint64_t n;
                std::memcpy(&n, value + i * sizeof(n), sizeof(n));
                total[i] += n;
            }
        return total;
    }

private:
    std::size_t counters_;
    std::size_t copies_;
    std::size_t copy_bytes_;
};

// One key's value read into a buffer of the layout's size.
class CounterValue {
public:
    explicit CounterValue(bpf_map* map)
        : layout_(map), bytes_(std::make_unique_for_overwrite<std::byte[]>(layout_.bytes()))
    {
    }

    void* data() { return bytes_.get(); }
    std::vector<std::uint64_t> sum() const { return layout_.sum(bytes_.get()); }

private:
    CounterValueLayout layout_;
    std::unique_ptr<std::byte[]> bytes_;
};

[[noreturn]] void throw_read_error(bpf_map* map)
{
    throw_libbpf_error(Exit::failure, "cannot read map " + std::string(bpf_map__name(map)), errno);
}

// Whether a read takes the entries out of the map or leaves them.
enum class Take { and_delete, copy };

// Two bpf() calls per key: what kernels before 5.6 allow. Adds to RESULT what is left in MAP.
std::vector<KeyedCounters> read_key_by_key(bpf_map* map, Take take, std::vector<KeyedCounters> result)
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

    CounterValue value(map);
    for (auto& k : keys) {
        const int error = take == Take::and_delete
                              ? bpf_map_lookup_and_delete_elem(fd, k.data(), value.data())
                              : bpf_map_lookup_elem(fd, k.data(), value.data());
        if (error != 0) {
            if (errno == ENOENT)
                continue;
            throw_read_error(map);
        }
        result.push_back({std::move(k), value.sum()});
    }
    return result;
}

// The kernel's answers to a batch operation it does not have: an unknown command (before 5.6),
// a map type without it (ENOTSUPP, 524, a kernel-internal number).
bool batches_unsupported(int error)
{
    constexpr int kernel_enotsupp = 524;
    return error == EINVAL || error == kernel_enotsupp || error == EOPNOTSUPP;
}

// Up to 4,096 keys a bpf() call, and a batch's values within 1 MiB (per-CPU histograms on many
// CPUs are large), but at least 64 keys.
std::uint32_t keys_per_batch(bpf_map* map, std::size_t value_bytes)
{
    constexpr std::size_t value_budget = std::size_t(1) << 20, fewest = 64, most = 4096;
    const std::size_t keys = std::clamp(value_budget / std::max<std::size_t>(value_bytes, 1),
                                        fewest, most);
    // More than the map holds is never needed.
    const std::size_t map_keys = std::max(bpf_map__max_entries(map), 1u);
    return static_cast<std::uint32_t>(std::min(keys, map_keys));
}

std::vector<KeyedCounters> read_in_batches(bpf_map* map, Take take)
{
    const int fd = bpf_map__fd(map);
    const std::size_t key_size = bpf_map__key_size(map);
    const CounterValueLayout layout(map);
    const std::uint32_t batch = keys_per_batch(map, layout.bytes());
    auto keys = std::make_unique_for_overwrite<std::byte[]>(batch * key_size);
    auto values = std::make_unique_for_overwrite<std::byte[]>(batch * layout.bytes());

    std::vector<KeyedCounters> result;
    auto* const read = take == Take::and_delete ? bpf_map_lookup_and_delete_batch : bpf_map_lookup_batch;
    std::uint32_t position = 0, next_position = 0; // a hash map's: the bucket to go on from
    for (bool first = true;; first = false) {
        std::uint32_t count = batch;
        const int error = read(fd, first ? nullptr : &position, &next_position, keys.get(),
                               values.get(), &count, nullptr)
                              ? errno
                              : 0;
        if (error && error != ENOENT) {
            // Nothing was taken: the whole map, or (a bucket of more keys than a batch, ENOSPC)
            // what is left of it, key by key; a copy left everything, so it starts over.
            if ((first && batches_unsupported(error)) || error == ENOSPC) {
                if (take == Take::copy)
                    result.clear();
                return read_key_by_key(map, take, std::move(result));
            }
            errno = error;
            throw_read_error(map);
        }
        for (std::uint32_t i = 0; i < count; i++) {
            const std::byte* key = keys.get() + i * key_size;
            result.push_back({std::vector<std::byte>(key, key + key_size),
                              layout.sum(values.get() + i * layout.bytes())});
        }
        if (error == ENOENT) // the walk reached the last bucket: every entry taken
            return result;
        position = next_position;
    }
}

// Every entry of MAP, taken out or copied.
std::vector<KeyedCounters> read_keyed_counters(bpf_map* map, DrainCalls calls, Take take)
{
    return calls == DrainCalls::batches ? read_in_batches(map, take) : read_key_by_key(map, take, {});
}

} // namespace

std::vector<KeyedCounters> drain_keyed_counters(bpf_map* map, DrainCalls calls)
{
    return read_keyed_counters(map, calls, Take::and_delete);
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

std::vector<KeyedCounters> SwappedMap::drain(Drain drain, DrainCalls calls)
{
    if (drain == Drain::last)
        return read_keyed_counters(halves_[active_], calls, Take::copy);
    const unsigned next = 1 - active_;
    const std::uint32_t zero = 0;
    const int next_fd = bpf_map__fd(halves_[next]);
    if (bpf_map_update_elem(bpf_map__fd(slot_), &zero, &next_fd, BPF_ANY) != 0)
        throw_libbpf_error(Exit::failure, "cannot switch map " + std::string(bpf_map__name(slot_)), errno);
    bpf_map* drained = halves_[active_];
    active_ = next;
    return drain_keyed_counters(drained, calls);
}

std::vector<std::vector<std::uint64_t>> sum_percpu_array(bpf_map* map)
{
    const int fd = bpf_map__fd(map);
    CounterValue values(map);
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
    CounterValue values(map);
    std::uint32_t key = 0;
    if (bpf_map_lookup_elem(bpf_map__fd(map), &key, values.data()) != 0)
        throw_read_error(map);
    return values.sum().at(0);
}

namespace {

// struct htab_elem before its key: hash-list node, free-list/LRU node, hash, and the per-CPU
// pointer or padding (kernel/bpf/hashtab.c).
constexpr std::uint64_t hash_element_header = 48;

std::uint64_t limit_from_options = 0;
// Charged by the thread that loads, read by any (the exporter's scrapes).
std::atomic<std::uint64_t> charged_bytes = 0;

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

MapMemoryCharge& MapMemoryCharge::operator=(MapMemoryCharge&& other) noexcept
{
    if (this != &other) {
        charged_bytes -= bytes_;
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

MapMemoryCharge::~MapMemoryCharge() { charged_bytes -= bytes_; }

std::uint64_t map_memory_charged() { return charged_bytes; }

MapMemoryCharge charge_map_memory(bpf_object* obj, std::string_view what)
{
    const std::size_t cpus = count_possible_cpus();
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
    const std::uint64_t total = charged_bytes + bytes;
    if (total > limit)
        throw Error(Exit::usage,
                    fmt::format("the maps of {} would take {} of kernel memory on {} CPUs, more "
                                "than the limit of {}{}: ask for fewer keys (--max-keys) or raise "
                                "--max-map-memory",
                                what, format_bytes(total), cpus, format_bytes(limit),
                                limit_from_options ? "" : " (1 GiB or half the available memory)"));
    charged_bytes += bytes;
    return MapMemoryCharge(bytes);
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
