// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The keyed drain (include/tpkit/bpf/maps.hpp) on the two kinds of hash it serves, with more keys than
// one batch: a per-CPU hash (the kernel hands out a copy of the counters per possible CPU) and a
// plain hash (one copy), tests/bpf/kit_keyed_drain.bpf.c's. Both ways of asking the kernel:
// batches, and key by key (what kernels without batch operations get).
#include "live.hpp"

#include "tpkit/bpf/maps.hpp"
#include "tpkit/bpf/skeleton.hpp"

#include "../bpf/kit_keyed_drain.h"
#include "kit_keyed_drain.skel.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using Counters = std::vector<std::uint64_t>;
using Totals = std::map<std::uint32_t, Counters>;
using tpkit::DrainCalls;

const DrainCalls both_ways[] = {DrainCalls::batches, DrainCalls::key_by_key};

std::string way(DrainCalls calls)
{
    return calls == DrainCalls::batches ? "in batches" : "key by key";
}

Counters counters_of(const kit_drain_counters& c) { return {c.calls, c.key_sum, c.thousands}; }

// What `closes` closes of key `key` count in each counter: 1, key + 1 and 1000 a close.
Counters counted(std::uint64_t closes, std::uint32_t key)
{
    return {closes, closes * (key + 1), closes * 1000};
}

// Adds each drained key's counters to TOTALS.
void add(Totals& totals, const std::vector<tpkit::KeyedCounters>& drained)
{
    for (const auto& entry : drained) {
        Counters& sum = totals[entry.key_as<std::uint32_t>()];
        sum.resize(entry.counters.size());
        for (std::size_t i = 0; i < sum.size(); i++)
            sum[i] += entry.counters[i];
    }
}

// "" when equal, else the first key that differs (a map of 10,000 keys is too long to print).
std::string first_difference(const Totals& got, const Totals& want)
{
    if (got.size() != want.size())
        return std::to_string(got.size()) + " keys drained, " + std::to_string(want.size()) +
               " expected";
    for (auto [g, w] = std::pair(got.begin(), want.begin()); g != got.end(); ++g, ++w) {
        if (g->first != w->first || g->second != w->second) {
            std::string text = "key " + std::to_string(g->first) + ":";
            for (auto n : g->second)
                text += " " + std::to_string(n);
            text += "; expected key " + std::to_string(w->first) + ":";
            for (auto n : w->second)
                text += " " + std::to_string(n);
            return text;
        }
    }
    return "";
}

bool empty(bpf_map* map)
{
    std::uint32_t key = 0;
    return bpf_map_get_next_key(bpf_map__fd(map), nullptr, &key) != 0 && errno == ENOENT;
}

int possible_cpus()
{
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0)
        throw std::runtime_error("cannot count CPUs");
    return cpus;
}

// The program loaded with each of its two swapped maps sized for KEYS, before it is attached.
// configure: its rodata, before load.
struct DrainProbe {
    DrainProbe(std::uint32_t keys, const std::function<void(kit_keyed_drain_bpf&)>& configure)
        : skel(tpkit::Skeleton<kit_keyed_drain_bpf>::open("kit_keyed_drain")),
          per_cpu(skel->maps.per_cpu_counts, skel->maps.per_cpu_counts_a, skel->maps.per_cpu_counts_b),
          plain(skel->maps.shared_counts, skel->maps.shared_counts_a, skel->maps.shared_counts_b)
    {
        per_cpu.set_max_entries(keys);
        plain.set_max_entries(keys);
        configure(*skel);
        skel.load();
    }

    tpkit::Skeleton<kit_keyed_drain_bpf> skel;
    tpkit::SwappedMap per_cpu, plain;
};

// File descriptors far above any open file's: closing them fails, and counts.
constexpr std::uint64_t first_fd = 1'000'000'000;

// A DrainProbe configuration: each close() of this process on first_fd + key, key < KEYS, counts.
std::function<void(kit_keyed_drain_bpf&)> counting_closes_of_this_process(std::uint32_t keys)
{
    return [keys](kit_keyed_drain_bpf& skel) {
        skel.rodata->first_fd = first_fd;
        skel.rodata->keys = keys;
        skel.rodata->tpkit_target_tgid = static_cast<__u32>(getpid());
    };
}

// What user space puts in at KEY as CPU's copy: different in every key, counter and CPU.
kit_drain_counters filled(std::uint32_t key, int cpu)
{
    const std::uint64_t k = key, c = static_cast<std::uint64_t>(cpu);
    return {k * 1000 + c + 1, k * 7 + 3 + (c << 20), (k << 32) + c * 11 + 5};
}

} // namespace

TEST(KeyedDrain, PerCpuAndPlainHashesDrainEveryCounterOfEveryKeyExactly)
{
    TPKIT_REQUIRE_LIVE();
    constexpr std::uint32_t keys = 10'000; // more than one batch takes (4,096 at most)
    const int cpus = possible_cpus();
    DrainProbe probe(keys, [](kit_keyed_drain_bpf&) {}); // not attached: only user space writes
    bpf_map* per_cpu = probe.skel->maps.per_cpu_counts_a;
    bpf_map* plain = probe.skel->maps.shared_counts_a;
    const int per_cpu_fd = bpf_map__fd(per_cpu), plain_fd = bpf_map__fd(plain);
    ASSERT_EQ(bpf_map__type(per_cpu), BPF_MAP_TYPE_PERCPU_HASH);
    ASSERT_EQ(bpf_map__type(plain), BPF_MAP_TYPE_HASH);
    // The kernel's per-CPU copies sit 8-byte aligned: 24 bytes apart here.
    static_assert(sizeof(kit_drain_counters) % 8 == 0);

    Totals per_cpu_sums, plain_values;
    for (std::uint32_t key = 0; key < keys; key++) {
        Counters sum(counters_of({}).size());
        for (int cpu = 0; cpu < cpus; cpu++) {
            const Counters copy = counters_of(filled(key, cpu));
            for (std::size_t i = 0; i < sum.size(); i++)
                sum[i] += copy[i];
        }
        per_cpu_sums[key] = sum;
        plain_values[key] = counters_of(filled(key, 0));
    }

    for (DrainCalls calls : both_ways) {
        SCOPED_TRACE(way(calls));
        std::vector<kit_drain_counters> copies(static_cast<std::size_t>(cpus));
        for (std::uint32_t key = 0; key < keys; key++) {
            for (int cpu = 0; cpu < cpus; cpu++)
                copies[static_cast<std::size_t>(cpu)] = filled(key, cpu);
            ASSERT_EQ(bpf_map_update_elem(per_cpu_fd, &key, copies.data(), BPF_NOEXIST), 0);
            ASSERT_EQ(bpf_map_update_elem(plain_fd, &key, &copies[0], BPF_NOEXIST), 0);
        }

        Totals got_per_cpu, got_plain;
        const auto drained_per_cpu = tpkit::drain_keyed_counters(per_cpu, calls);
        const auto drained_plain = tpkit::drain_keyed_counters(plain, calls);
        add(got_per_cpu, drained_per_cpu);
        add(got_plain, drained_plain);
        EXPECT_EQ(drained_per_cpu.size(), keys) << "a key drained twice";
        EXPECT_EQ(drained_plain.size(), keys) << "a key drained twice";
        EXPECT_EQ(first_difference(got_per_cpu, per_cpu_sums), "") << "per-CPU hash";
        EXPECT_EQ(first_difference(got_plain, plain_values), "") << "plain hash";
        EXPECT_TRUE(empty(per_cpu));
        EXPECT_TRUE(empty(plain));
        EXPECT_TRUE(tpkit::drain_keyed_counters(per_cpu, calls).empty());
        EXPECT_TRUE(tpkit::drain_keyed_counters(plain, calls).empty());
    }
}

// Two threads (on both CPUs where the scheduler lets them) close() file descriptors that do not
// exist, each key once per round, while the maps are drained again and again: every close counted
// once, in one interval or another, in both kinds of hash.
TEST(KeyedDrain, SwappedHashesLoseNoIncrementMadeWhileTheyAreDrained)
{
    TPKIT_REQUIRE_LIVE();
    constexpr std::uint32_t keys = 8'192;
    constexpr unsigned busy_drains = 6;
    for (DrainCalls calls : both_ways) {
        SCOPED_TRACE(way(calls));
        DrainProbe probe(keys, counting_closes_of_this_process(keys));
        probe.skel.attach();

        std::atomic<bool> stop{false};
        std::atomic<std::uint64_t> rounds{0};
        auto closer = [&] {
            while (!stop) {
                for (std::uint64_t fd = first_fd; fd < first_fd + keys; fd++)
                    close(static_cast<int>(fd));
                rounds++;
            }
        };
        Totals per_cpu_totals, plain_totals;
        unsigned drains_with_counts = 0;
        {
            std::jthread first(closer), second(closer);
            constexpr int most_drains = 1000;
            for (int i = 0; i < most_drains && drains_with_counts < busy_drains; i++) {
                const auto a = probe.per_cpu.drain(tpkit::Drain::interval, calls);
                const auto b = probe.plain.drain(tpkit::Drain::interval, calls);
                add(per_cpu_totals, a);
                add(plain_totals, b);
                drains_with_counts += !a.empty() && !b.empty();
            }
            stop = true;
        }
        // The closers are done: what they counted last is in the halves in use now.
        add(per_cpu_totals, probe.per_cpu.drain(tpkit::Drain::interval, calls));
        add(plain_totals, probe.plain.drain(tpkit::Drain::interval, calls));

        EXPECT_EQ(drains_with_counts, busy_drains);
        const std::uint64_t made = rounds;
        ASSERT_GT(made, 0u);
        Totals expected;
        for (std::uint32_t key = 0; key < keys; key++)
            expected[key] = counted(made, key);
        EXPECT_EQ(first_difference(per_cpu_totals, expected), "") << "per-CPU hash, " << made << " rounds";
        EXPECT_EQ(first_difference(plain_totals, expected), "") << "plain hash, " << made << " rounds";
        EXPECT_EQ(tpkit::sum_percpu_u64(probe.skel->maps.tpkit_missed), 0u);
    }
}

// The last drain, after an interval's: it reads the half BPF updates now, neither swapping nor
// deleting, so that a second last read sees the same counts plus what came after the first.
TEST(KeyedDrain, LastDrainReadsTheHalfInUseAndLeavesIt)
{
    TPKIT_REQUIRE_LIVE();
    constexpr std::uint32_t keys = 5'000; // more than one batch of the per-CPU hash
    for (DrainCalls calls : both_ways) {
        SCOPED_TRACE(way(calls));
        DrainProbe probe(keys, counting_closes_of_this_process(keys));
        probe.skel.attach();
        std::uint64_t rounds = 0; // of close_each_key()
        auto close_each_key = [&] {
            for (std::uint64_t fd = first_fd; fd < first_fd + keys; fd++)
                close(static_cast<int>(fd));
            rounds++;
        };
        auto expected = [&](std::uint64_t closes) {
            Totals totals;
            for (std::uint32_t key = 0; key < keys; key++)
                totals[key] = counted(closes, key);
            return totals;
        };
        close_each_key();
        Totals first_interval, last, again;
        add(first_interval, probe.per_cpu.drain(tpkit::Drain::interval, calls));
        EXPECT_EQ(first_difference(first_interval, expected(rounds)), "");
        const std::uint64_t swapped_out = rounds; // in the half the interval's drain took

        close_each_key();
        close_each_key();
        add(last, probe.per_cpu.drain(tpkit::Drain::last, calls));
        EXPECT_EQ(first_difference(last, expected(rounds - swapped_out)), "");
        close_each_key();
        add(again, probe.per_cpu.drain(tpkit::Drain::last, calls));
        EXPECT_EQ(first_difference(again, expected(rounds - swapped_out)), "");

        Totals plain;
        add(plain, probe.plain.drain(tpkit::Drain::last, calls));
        EXPECT_EQ(first_difference(plain, expected(rounds)), "") << "never swapped: the first half";
        EXPECT_EQ(tpkit::sum_percpu_u64(probe.skel->maps.tpkit_missed), 0u);
    }
}
