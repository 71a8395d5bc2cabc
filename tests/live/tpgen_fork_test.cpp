// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpgen output used for real: a BPF program on the generated flavoured sched_process_fork
// getters, and one on the generated raw tracepoint arguments, see a batch of forks exactly.
#include "live.hpp"
#include "tool_run.hpp"

#include "tpkit/bpf/skeleton.hpp"

#include "tpgen_fork.skel.h"
#include "tpgen_raw_fork.skel.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <unistd.h>

namespace {

constexpr int children = 8;
const std::string comm = "tpk-tpgen";

std::set<pid_t> as_set(const std::vector<pid_t>& pids) { return {pids.begin(), pids.end()}; }

// Loads Skel with the batch's comm as its target, attaches it and runs the batch of forks.
template <class Skel>
std::pair<tpkit::Skeleton<Skel>, tpkit::live::ForkBatch> run_batch_under(const std::string& name)
{
    auto skel = tpkit::Skeleton<Skel>::open(name);
    std::memcpy(const_cast<char*>(skel->rodata->target_comm), comm.c_str(), comm.size() + 1);
    skel.load();
    skel.attach();
    tpkit::live::ForkBatch batch = tpkit::live::run_fork_batch(comm, children, 0);
    return {std::move(skel), std::move(batch)};
}

// What every program of a batch saw: exactly its children, by pid.
template <class Bss>
void expect_exactly_the_children(const Bss* bss, const tpkit::live::ForkBatch& batch)
{
    ASSERT_EQ(bss->seen_count, static_cast<unsigned>(children));
    std::vector<pid_t> seen(bss->child_pids, bss->child_pids + children);
    EXPECT_EQ(as_set(seen), as_set(batch.children));
}

} // namespace

TEST(TpgenLive, FlavouredForkGettersReadChildPidAndCommOnThisKernel)
{
    TPKIT_REQUIRE_LIVE();
    auto [skel, batch] = run_batch_under<tpgen_fork_bpf>("tpgen_fork");

    const auto* bss = skel->bss;
    expect_exactly_the_children(bss, batch);
    for (int i = 0; i < children; i++) {
        EXPECT_EQ(bss->parent_pids[i], batch.forker) << i;
        EXPECT_EQ(std::string(bss->parent_comms[i]), comm) << i;
        EXPECT_EQ(std::string(bss->child_comms[i]), comm) << i;
    }
}

TEST(TpgenLive, RawArgumentsReadTheChildPidFromItsTaskStruct)
{
    TPKIT_REQUIRE_LIVE();
    auto [skel, batch] = run_batch_under<tpgen_raw_fork_bpf>("tpgen_raw_fork");

    const auto* bss = skel->bss;
    expect_exactly_the_children(bss, batch);
    for (int i = 0; i < children; i++) {
        EXPECT_EQ(bss->child_tgids[i], bss->child_pids[i]) << i; // processes, not threads
        EXPECT_EQ(std::string(bss->child_comms[i]), comm) << i;
    }
}
