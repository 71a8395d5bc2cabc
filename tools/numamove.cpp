// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// numamove: page migrations each second, by reason, from migrate:mm_migrate_pages_start and
// mm_migrate_pages; libbpf-tools' numamove (its NUMA line by default).
#include "collectors/numamove.hpp"

#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/run/tool.hpp>

namespace {

constexpr const char* examples = R"(  numamove                  # NUMA-misplaced page migrations and their ms, every second
  numamove --all-reasons    # every reason's migrations, pages and time, every second
  numamove -p 181           # only migrations in process 181
  numamove --json           # a count line per reason every second
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("numamove",
                   "Count page migrations (migrate_pages() calls, the pages they migrated and "
                   "their time) every second, by reason: NUMA-misplaced pages by default.\n-p, -t, "
                   "-u, --cgroup and --comm select the migrating task.",
                   examples);
    tpkit::numamove::Options options;
    cli.add_common();
    tpkit::numamove::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::require_event({"migrate", "mm_migrate_pages_start"},
                             "kernels built with CONFIG_MIGRATION have it");
        // Every second, as libbpf-tools'.
        tpkit::CommonOptions common = cli.options();
        common.interval = 1;
        tpkit::run_collector(common, *tpkit::numamove::open(cli, options));
    });
}
