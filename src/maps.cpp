#include "tpkit/maps.hpp"

#include "tpkit/error.hpp"

#include <bpf/bpf.h>

#include <cerrno>
#include <string>

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

std::uint64_t sum_percpu_u64(bpf_map* map)
{
    PercpuValues values(map);
    std::uint32_t key = 0;
    if (bpf_map_lookup_elem(bpf_map__fd(map), &key, values.data()) != 0)
        throw_read_error(map);
    return values.sum().at(0);
}

} // namespace tpkit
