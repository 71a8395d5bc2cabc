// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tphist: an in-kernel histogram of one integer field of any tracepoint, no compiler needed.
#include "collectors/tphist.hpp"

#include <tpkit/engine/engine.hpp>
#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  tphist syscalls:sys_enter_read count             # read() sizes, log2 buckets, at Ctrl-C
  tphist syscalls:sys_enter_read count 1 5         # print every second, five times
  tphist syscalls:sys_enter_read count --linear 0,4096,512
  tphist syscalls:sys_enter_read count --loglinear 2   # 4 sub-buckets per power of two
  tphist syscalls:sys_enter_read count --by comm --filter 'fd == 0'
  tphist net:netif_receive_skb len --json -d 10
  tphist block:block_rq_issue 'nr_sector*512'     # request sizes in bytes
  tphist sched:sched_stat_runtime runtime --unit us
  tphist syscalls:sys_exit_read ret --by pid        # per process, headed "pid = 181 bash"
  tphist syscalls:sys_enter_write count --by comm,fd   # a key of several parts
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tphist", "Histogram of an integer field of any tracepoint, in the kernel.",
                   examples);
    tpkit::tphist::Options options;
    cli.option("event", options.event, "the tracepoint, SYSTEM:EVENT").required();
    cli.option("field", options.field,
               "the integer field to measure: FIELD, or FIELD*N or FIELD/N (N an integer)")
        .required();
    tpkit::add_classic_option(cli, options.classic);
    cli.add_common();
    cli.add_map_memory();
    cli.add_interval_count();
    tpkit::tphist::add_bucket_options(cli, options.linear, options.loglinear,
                                      "linear buckets from MIN to MAX, STEP wide, instead of log2");
    cli.option("--unit", options.unit,
               "ns, us or ms: a field in nanoseconds (its name ends in _ns, or the event's "
               "format says [ns]) shown in this unit")
        .one_of({"ns", "us", "ms"});
    cli.option("--by", options.by,
               "one histogram per comm, pid, tid, cpu, kstack, ustack or FIELD, or per "
               "several of them separated by commas (pid,comm)")
        .type_name("KEYS")
        .complete("@list comm pid tid cpu kstack ustack @fields");
    tpkit::add_stack_storage_option(cli, options.stack_storage);
    cli.option("--filter", options.filter,
               "only events matching this expression (the kernel's filter grammar)")
        .type_name("EXPR");
    cli.option("--max-keys", options.max_keys, "at most N keys with --by (default 1024)")
        .type_name("N")
        .range(1u, 1u << 20);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::tphist::open(cli, options));
    });
}
