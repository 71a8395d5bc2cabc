// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// syscount: the syscalls of the machine counted in the kernel, by syscall or by process, with
// their time (-L); bcc's syscount's options and tables.
#include "collectors/syscount.hpp"

#include <tpkit/kernel/syscalls.hpp>
#include <tpkit/run/tool.hpp>

#include <algorithm>

namespace {

constexpr const char* examples = R"(  syscount                  # the ten most frequent syscalls, at Ctrl-C
  syscount -i 1             # every second (also: syscount 1)
  syscount -p 181 -T 20     # the twenty most frequent syscalls of PID 181
  syscount -L -m            # time spent in each syscall, in milliseconds
  syscount -P               # by process instead of by syscall
  syscount -x               # failed syscalls only
  syscount -e ENOENT -P     # the processes whose syscalls fail with ENOENT
  syscount --syscall openat -P --json -d 10
  syscount -l               # the syscalls this build knows by name
)";

void list_syscalls()
{
    for (const tpkit::Syscall& s : tpkit::syscalls())
        tpkit::standard_output().print("{:3}: {}\n", s.number, s.name);
}

// Like bcc's, every table is headed by its time; -i is [interval] too.
void run(const tpkit::syscount::Options& options, const tpkit::Cli& cli)
{
    tpkit::CommonOptions common = cli.options();
    if (options.interval > 0 && common.interval > 0)
        throw tpkit::Error(tpkit::Exit::usage, "give the interval once: -i or [interval]");
    common.interval = std::max(common.interval, options.interval);
    common.timestamp = true;
    tpkit::run_collector(common, *tpkit::syscount::open(cli, options));
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("syscount", "Count syscalls, by syscall or by process, in the kernel.", examples);
    tpkit::syscount::Options options;
    cli.add_common();
    // -T is bcc's --top here; every table is headed by its time anyway.
    cli.remove_option("--timestamp");
    cli.add_interval_count();
    cli.option("-T,--top", options.top, "print only the N most frequent (default 10)")
        .type_name("N")
        .range(std::size_t(1), std::size_t(1) << 30);
    cli.option("-i,--interval", options.interval, "print every SECONDS (as [interval])")
        .positive()
        .type_name("SECONDS");
    tpkit::syscount::add_options(cli, options);
    cli.flag("-l,--list", options.list, "list the syscalls known by name and exit");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        if (options.list)
            list_syscalls();
        else
            run(options, cli);
    });
}
