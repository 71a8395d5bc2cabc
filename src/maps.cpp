#include "tpkit/maps.hpp"

#include "tpkit/error.hpp"

#include <bpf/bpf.h>

#include <cerrno>
#include <string>

namespace tpkit {

std::vector<KeyedCounters> drain_percpu_counters(bpf_map* map)
{
    const int fd = bpf_map__fd(map);
    const std::size_t key_size = bpf_map__key_size(map);
    const std::size_t per_cpu = bpf_map__value_size(map) / sizeof(std::uint64_t);
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0)
        throw_libbpf_error(Exit::failure, "cannot count CPUs", cpus);

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
    std::vector<std::uint64_t> values(per_cpu * static_cast<std::size_t>(cpus));
    for (auto& k : keys) {
        if (bpf_map_lookup_and_delete_elem(fd, k.data(), values.data()) != 0) {
            if (errno == ENOENT)
                continue;
            throw_libbpf_error(Exit::failure,
                               "cannot read map " + std::string(bpf_map__name(map)), errno);
        }
        KeyedCounters entry{std::move(k), std::vector<std::uint64_t>(per_cpu)};
        for (int cpu = 0; cpu < cpus; cpu++)
            for (std::size_t i = 0; i < per_cpu; i++)
                entry.counters[i] += values[static_cast<std::size_t>(cpu) * per_cpu + i];
        result.push_back(std::move(entry));
    }
    return result;
}

} // namespace tpkit
