// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tplist: the tracepoints of this kernel, optionally with their fields.
#include <tpkit/cli/cli.hpp>
#include <tpkit/engine/engine.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/core.h>

namespace {

constexpr const char* examples = R"(  tplist                       # every tracepoint
  tplist 'sched:*'             # the sched system's events
  tplist -v syscalls:sys_enter_read   # its fields: type, offset, size, signedness
  tplist 'sys_enter_*'         # a glob without ':' matches a system or an event name
  tplist -v --json 'net:*'     # one JSON object per event
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tplist", "List tracepoints, with their fields from the format files.", examples);
    std::string glob;
    bool verbose = false, json = false;
    cli.option("glob", glob, "only events whose SYSTEM:EVENT matches this glob");
    cli.flag("-v,--verbose", verbose, "show each event's fields");
    cli.flag("--json", json, "one JSON object per line");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        auto root = tpkit::live_events_root();
        auto events = tpkit::list_events(root, glob);
        if (events.empty() && !glob.empty())
            throw tpkit::Error(tpkit::Exit::unknown_target,
                               fmt::format("no tracepoint matches '{}'", glob));
        for (const auto& name : events) {
            tpkit::EventFormat format;
            if (verbose || json) {
                format = tpkit::read_format(root / name.system / name.event / "format");
                format.system = name.system;
            } else {
                format.system = name.system;
                format.name = name.event;
            }
            if (json)
                tpkit::standard_output().print("{}\n", tpkit::describe_event_json(format, verbose));
            else
                tpkit::standard_output().print("{}", tpkit::describe_event(format, verbose));
            }
    });
}
