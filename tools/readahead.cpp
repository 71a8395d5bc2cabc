// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// readahead: readahead calls and windows, in pages, as histograms, from the readahead
// tracepoints (kernels newer than 6.12); libbpf-tools' readahead measures with kprobes what no
// tracepoint sees (pages never used, and how long until their first use).
#include "collectors/readahead.hpp"

#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  readahead                 # histograms of readahead, at Ctrl-C
  readahead 1 10            # print every second, ten times
  readahead -d 10           # after 10 seconds
  readahead --per-file      # per file (device and inode)
  readahead --per-device -p 181  # per device, readahead done by process 181
  readahead --json          # as JSON
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("readahead",
                   "Summarize file readahead as log2 histograms of pages: the synchronous and "
                   "asynchronous readahead calls with the pages the read asked for, and the "
                   "windows read ahead.\n-p, -t, -u, --cgroup and --comm select the task that "
                   "reads.",
                   examples);
    tpkit::readahead::Options options;
    cli.add_common();
    cli.add_interval_count();
    tpkit::readahead::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] {
        tpkit::run_collector(cli.options(), *tpkit::readahead::open(cli, options));
    });
}
