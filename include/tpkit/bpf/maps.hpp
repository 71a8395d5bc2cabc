// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Reading aggregation maps filled by BPF programs.
#pragma once

#include <bpf/libbpf.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpkit {

// One key of a hash map whose values are arrays of __u64 counters; a per-CPU map's copies
// summed over CPUs.
struct KeyedCounters {
    std::vector<std::byte> key;
    std::vector<std::uint64_t> counters;

    // The key as the BPF program's key type: zero where the bytes are fewer (the empty key of
    // a made-up entry: all zero).
    template <class Key>
    Key key_as() const
    {
        Key k{};
        if (!key.empty())
            std::memcpy(&k, key.data(), std::min(key.size(), sizeof(k)));
        return k;
    }
};

// How a drain asks the kernel for the entries: thousands of keys a bpf() call (kernels from 5.6
// on; key by key by itself where the kernel has no batch operations), or two calls per key.
enum class DrainCalls { batches, key_by_key };

// Which drain of a run: one an interval follows, or the last, after which nothing is read.
enum class Drain { interval, last };

// Takes every entry out of a hash map whose value is an array of __u64 counters: a
// BPF_MAP_TYPE_PERCPU_HASH or LRU_PERCPU_HASH (each key's copies summed over CPUs), or a
// BPF_MAP_TYPE_HASH or LRU_HASH whose programs share one value (atomic adds). Each entry is read
// and deleted in one step, so a key a program inserts while the drain runs is taken by this
// drain or the next; but an increment made through a pointer a program looked up before the
// delete is lost, so a map that programs keep updating is drained through SwappedMap.
std::vector<KeyedCounters> drain_keyed_counters(bpf_map* map, DrainCalls calls = DrainCalls::batches);

// The two halves of a swapped map (bpf/include/tpkit/maps.bpf.h) and the array of maps
// that names the half BPF updates now: drains keyed counters exactly while BPF keeps counting.
class SwappedMap {
public:
    // The skeleton's maps NAME, NAME_a and NAME_b.
    SwappedMap(bpf_map* slot, bpf_map* first, bpf_map* second);

    // Before load: keys each half holds.
    void set_max_entries(std::uint32_t keys);
    // Before load: makes this object use OTHER's maps (engine instances share them).
    void share(const SwappedMap& other);
    // Before load: none of the three maps is created, for a run whose programs never reach
    // them (a branch the verifier drops on read-only data).
    void leave_out();

    // After load: points BPF at the other half, which the kernel makes wait for every program
    // still using this one (an RCU grace period: bench/BENCHMARKS.md, "Fixed cost of every tool"),
    // then takes every entry out of this one (drain_keyed_counters). Until the first drain the
    // slot is empty: BPF uses NAME_a. The last drain neither swaps nor waits: it reads the half
    // in use, deleting nothing (a deleted entry could be reused for another key while a program
    // still adds to it); what comes as it reads is in the reading or after: as with any last look.
    std::vector<KeyedCounters> drain(Drain drain, DrainCalls calls = DrainCalls::batches);

private:
    bpf_map* slot_;
    bpf_map* halves_[2];
    unsigned active_ = 0;
};

// Every entry of a BPF_MAP_TYPE_PERCPU_ARRAY whose value is an array of __u64, summed over
// CPUs: result[key][i].
std::vector<std::vector<std::uint64_t>> sum_percpu_array(bpf_map* map);

// A BPF_MAP_TYPE_PERCPU_ARRAY of __u64 counters that BPF only adds to, read at every interval:
// how much each key's counters grew since the previous read (summed over CPUs). No swap or
// delete is needed for an exact interval, and BPF finds its counters without hashing.
class ArrayGrowth {
public:
    explicit ArrayGrowth(bpf_map* map) : map_(map) {}
    // increase()[key][i]
    std::vector<std::vector<std::uint64_t>> increase();

private:
    bpf_map* map_;
    std::vector<std::vector<std::uint64_t>> seen_;
};

// The one __u64 at key 0 of a per-CPU array (a counter such as drops), summed over CPUs.
std::uint64_t sum_percpu_u64(bpf_map* map);

// A per-CPU counter (counter.bpf.h) read at every interval: how much it grew since the last
// read, for "N events not counted" lines that say each loss once.
class CounterWatch {
public:
    explicit CounterWatch(bpf_map* counter) : counter_(counter) {}
    std::uint64_t increase();
    // Everything seen by increase() so far.
    std::uint64_t seen() const { return seen_; }

private:
    bpf_map* counter_;
    std::uint64_t seen_ = 0;
};

// tpkit_missed (maps.bpf.h: keys that found their map full, starts of timing.bpf.h) checked at
// every interval, each loss said once on stderr: "TOOL: N events not counted: REASON".
class MissedWatch {
public:
    // reason: why, and what to change ("more than 1024 keys (see --max-keys)").
    MissedWatch(std::string tool, bpf_map* missed, std::string reason)
        : tool_(std::move(tool)), reason_(std::move(reason)), counter_(missed)
    {
    }
    // Says the events not counted since the last report, if any, and returns how many.
    std::uint64_t report();
    // Events not counted, as reported so far.
    std::uint64_t total() const { return counter_.seen(); }

private:
    std::string tool_;
    std::string reason_;
    CounterWatch counter_;
};

// Kernel memory a map takes once created, as the kernel sizes it: a hash map allocates every
// entry up front (one value per possible CPU for per-CPU maps), so options that size maps can
// ask for more memory than the machine has. The figure counts element headers and keys too.
std::uint64_t map_memory_bytes(bpf_map_type type, std::uint32_t max_entries,
                               std::uint32_t key_size, std::uint32_t value_size,
                               unsigned possible_cpus);

// The memory all maps of one tool may take: --max-map-memory when given, else 1 GiB or half
// of the memory available now, whichever is smaller.
void set_map_memory_limit(std::uint64_t bytes);
std::uint64_t map_memory_limit();

// One object's part of the process's total of map memory, given back when destroyed: a process
// that unloads objects and loads others (the exporter's reloads) is held to what it has loaded
// now, not to all it ever loaded.
class MapMemoryCharge {
public:
    MapMemoryCharge() = default;
    MapMemoryCharge(MapMemoryCharge&& other) noexcept : bytes_(std::exchange(other.bytes_, 0)) {}
    MapMemoryCharge& operator=(MapMemoryCharge&& other) noexcept;
    ~MapMemoryCharge();

private:
    friend MapMemoryCharge charge_map_memory(bpf_object* obj, std::string_view what);
    explicit MapMemoryCharge(std::uint64_t bytes) : bytes_(bytes) {}

    std::uint64_t bytes_ = 0;
};

// Before load: adds what OBJ's maps will take (maps shared from another object are counted
// there) to the process's total, and refuses with Error(usage) naming the figures when the
// total passes map_memory_limit(), before the kernel allocates anything. Keep the charge as long
// as the object is loaded.
[[nodiscard]] MapMemoryCharge charge_map_memory(bpf_object* obj, std::string_view what);

// The process's total: what the charges alive now hold.
std::uint64_t map_memory_charged();

// "16.1 MiB", "2.0 GiB": sizes in messages.
std::string format_bytes(std::uint64_t bytes);

} // namespace tpkit
