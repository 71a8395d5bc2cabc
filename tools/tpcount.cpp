// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpcount: counts the events of any tracepoints in the kernel, in total or by a key.
#include "collectors/tpcount.hpp"

#include <tpkit/engine/engine.hpp>
#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  tpcount sched:sched_process_fork                # forks, at Ctrl-C
  tpcount 'syscalls:sys_enter_*' --top 10 1       # the ten most frequent syscalls, every second
  tpcount syscalls:sys_enter_read --by comm       # read() calls by command name
  tpcount syscalls:sys_enter_read --by fd --filter 'count > 4096'
  tpcount sched:sched_switch --by prev_comm --json -d 5
  tpcount sched:sched_switch --by kstack -d 5 > folded   # kernel stacks, for flamegraph.pl
  tpcount raw_syscalls:sys_enter --by ustack -p 185 -d 5  # user stacks (comm;frames… COUNT)
  tpcount syscalls:sys_enter_write --by pid,comm    # a key of several parts
  tpcount 'sched:sched_*' --filter 'sched:sched_switch=prev_pid == 0'  # a filter for one event
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tpcount", "Count the events of any tracepoints, in the kernel.", examples);
    tpkit::tpcount::Options options;
    cli.option("--by", options.by,
               "count by comm, pid, tid, cpu, kstack, ustack or FIELD, or several of "
               "them separated by commas (pid,comm); stacks print folded")
        .type_name("KEYS")
        .complete("@list comm pid tid cpu kstack ustack @fields");
    cli.option("--filter", options.filters,
               "only events matching this expression (the kernel's filter grammar); "
               "SYSTEM:EVENT=EXPR for those events alone; repeatable, all must match")
        .allow_extra_args(false)
        .type_name("EXPR");
    cli.option("--top", options.top, "print only the N largest counts")
        .type_name("N")
        .range(std::size_t(1), std::size_t(1) << 30);
    cli.option("--max-keys", options.max_keys, "at most N keys with --by (default 10240)")
        .type_name("N")
        .range(1u, 1u << 24);
    tpkit::add_stack_storage_option(cli, options.stack_storage);
    tpkit::add_classic_option(cli, options.classic);
    cli.add_common();
    cli.add_map_memory();
    std::vector<std::string> positionals;
    cli.option("event", positionals, "tracepoints SYSTEM:EVENT or globs, then [interval] [count]")
        .required();
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::CommonOptions common = cli.options();
        options.events = tpkit::split_interval_count(positionals, common);
        tpkit::run_collector(common, *tpkit::tpcount::open(cli, options));
    });
}
