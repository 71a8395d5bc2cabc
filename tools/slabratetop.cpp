// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// slabratetop: the kernel slab caches allocated from the most, every interval; bcc's slabratetop.
#include "collectors/slabratetop.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  slabratetop               # top caches by bytes allocated, every second
  slabratetop 5 10          # every 5 seconds, ten times
  slabratetop -C -r 5       # the top 5, without clearing the screen
  slabratetop -s count      # sorted by allocations (size, count, name)
  slabratetop -p 181        # only the allocations made in process 181
  slabratetop --json 1 3    # as JSON, one object per cache
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("slabratetop",
                   "Show the kernel slab caches allocated from the most, every INTERVAL seconds "
                   "(1 by default): per cache the objects handed out by kmem_cache_alloc() and "
                   "its variants (ALLOCS) and their size in the cache (BYTES), from the "
                   "kmem:kmem_cache_alloc tracepoint. kmalloc() is not counted (it fires "
                   "kmem:kmalloc).\n-p, -t, -u, --cgroup and --comm select the task that "
                   "allocates, as the kernel sees it (an interrupt's allocation is the "
                   "interrupted task's).",
                   examples);
    tpkit::slabratetop::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::slabratetop::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        // Every second unless told.
        tpkit::CommonOptions common = cli.options();
        if (common.interval <= 0)
            common.interval = 1;
        tpkit::run_collector(common, *tpkit::slabratetop::open(cli, options));
    });
}
