// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A BPF program's statistics as /proc/self/fdinfo prints them: 6.18's text and 6.1's (which has
// no verified_insns), and a kernel older than recursion_misses (5.11), whose skips count nowhere.
#include "tpkit/bpf/program_stats.hpp"

#include <gtest/gtest.h>

namespace {

TEST(ProgramStats, FdinfoOfAProgramGivesRunsTimeAndSkippedRuns)
{
    const auto s = tpkit::parse_program_fdinfo("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t2061\n"
                                               "prog_type:\t5\nprog_jited:\t1\n"
                                               "prog_tag:\tb4d9a3f5c0e1f2a7\nmemlock:\t4096\n"
                                               "prog_id:\t812\nrun_time_ns:\t1834\nrun_cnt:\t12\n"
                                               "recursion_misses:\t739\nverified_insns:\t38\n");
    EXPECT_EQ(s.runs, 12u);
    EXPECT_EQ(s.run_time_ns, 1834u);
    EXPECT_EQ(s.recursion_misses, 739u);
}

TEST(ProgramStats, FieldsAKernelDoesNotPrintAreZero)
{
    const auto s = tpkit::parse_program_fdinfo("prog_type:\t17\nprog_jited:\t1\nprog_id:\t4\n"
                                               "run_time_ns:\t0\nrun_cnt:\t0\n");
    EXPECT_EQ(s.recursion_misses, 0u);
    // A name that only starts like another is not it.
    EXPECT_EQ(tpkit::parse_program_fdinfo("run_cnt_total:\t9\nrun_cnt:\t3\n").runs, 3u);
}

TEST(ProgramStats, AProcessWithoutProgramsSkippedNone)
{
    EXPECT_EQ(tpkit::process_recursion_misses(), 0u);
}

TEST(ProgramStats, TheLineSaysWhoseRunsWhyAndWhatIsMissing)
{
    EXPECT_EQ(tpkit::skipped_runs_message("tpsnoop", 739),
              "tpsnoop: 739 runs of its BPF programs skipped by the kernel (another BPF program was "
              "running on that CPU): the events of those runs are missing");
}

} // namespace
