// Reading aggregation maps filled by BPF programs.
#pragma once

#include <bpf/libbpf.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpkit {

// One key of a per-CPU map whose values are arrays of __u64 counters, summed over CPUs.
struct KeyedCounters {
    std::vector<std::byte> key;
    std::vector<std::uint64_t> counters;
};

// Takes every entry out of a BPF_MAP_TYPE_PERCPU_HASH whose value is an array of __u64:
// each key is read and deleted in one step, so counts that arrive meanwhile go to the next
// interval instead of being lost.
std::vector<KeyedCounters> drain_percpu_counters(bpf_map* map);

// Every entry of a BPF_MAP_TYPE_PERCPU_ARRAY whose value is an array of __u64, summed over
// CPUs: result[key][i].
std::vector<std::vector<std::uint64_t>> sum_percpu_array(bpf_map* map);

// The one __u64 at key 0 of a per-CPU array (a counter such as drops), summed over CPUs.
std::uint64_t sum_percpu_u64(bpf_map* map);

} // namespace tpkit
