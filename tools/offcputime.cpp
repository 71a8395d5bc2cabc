// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offcputime: time threads spend blocked (off-CPU), by kernel and user stack, symbolized.
#include "collectors/offcputime.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  offcputime                # off-CPU time by stack, until Ctrl-C
  offcputime 5              # for 5 seconds
  offcputime -f 5 > folded  # folded stacks, for flamegraph.pl
  offcputime -m 1000        # only blocks of more than 1000 us
  offcputime -M 10000       # only blocks of less than 10000 us
  offcputime -p 185         # only threads of process 185
  offcputime -t 188         # only thread 188
  offcputime -u             # only user threads (no kernel threads)
  offcputime -k             # only kernel threads
  offcputime -U             # user stacks only
  offcputime -K             # kernel stacks only
  offcputime --state 2      # only uninterruptible sleeps (TASK_UNINTERRUPTIBLE)
  offcputime --json -d 5    # one JSON object per stack
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("offcputime", "Summarize off-CPU time by stack: where threads block, and for how long.",
                   examples);
    tpkit::offcputime::Options options;
    cli.add_common();
    tpkit::offcputime::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::CommonOptions common = cli.options();
        if (options.duration)
            common.duration = *options.duration;
        tpkit::run_collector(common, *tpkit::offcputime::open(cli, options));
    });
}
