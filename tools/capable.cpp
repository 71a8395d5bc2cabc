// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// capable: every capability check and its verdict, from capability:cap_capable; bcc's capable.
#include <tpkit/tools/capable.h>
#include "capable.skel.h"

#include <tpkit/kernel/constants.hpp>
#include <tpkit/kernel/tracefs.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>


namespace {

constexpr const char* examples = R"(  capable                   # every capability check
  capable -p 181            # only the checks of process 181
  capable -x                # with TID and the user namespace of the resource
  capable -u pid            # each capability and verdict once per process
  capable --json | jq .     # one JSON object per check
)";

using Event = capable_event;
using tpkit::Align;
using tpkit::Value;

Value cap_name(const Event& e)
{
    if (auto name = tpkit::constant_name(tpkit::capabilities(), std::uint64_t(e.cap)))
        return *name;
    return tpkit::absent; // newer than the build's <linux/capability.h>
}

// bcc's columns: TIME UID PID [TID] COMM CAP NAME AUDIT VERDICT. AUDIT is unknown here: the
// tracepoint does not carry cap_capable()'s options (CAP_OPT_NOAUDIT, CAP_OPT_INSETID), so it
// is "-" (null), and every check is shown, audited or not (bcc's -v).
tpkit::Columns<Event> columns(bool extra)
{
    return {
        tpkit::task_time_column<Event>(),
        tpkit::task_column<Event>(tpkit::TaskField::uid, "UID", 5, tpkit::Align::left),
        tpkit::task_column<Event>(tpkit::TaskField::pid, "PID", 7, tpkit::Align::left),
        tpkit::json_only_unless(extra, tpkit::task_column<Event>(tpkit::TaskField::tid, "TID", 7, tpkit::Align::left)),
        tpkit::task_column<Event>(tpkit::TaskField::comm, "COMM", 16, tpkit::Align::left),
        {"CAP", "cap", 7, Align::left, [](const Event& e) -> Value { return e.cap; }},
        {"NAME", "name", 20, Align::left, cap_name},
        {"AUDIT", "audit", 7, Align::left, [](const Event&) -> Value { return tpkit::absent; }},
        {"VERDICT", "verdict", extra ? 7 : 0, Align::left,
         [](const Event& e) -> Value { return e.ret == 0 ? "allow" : "deny"; }},
        tpkit::json_only_unless<Event>(extra, {"USER_NS", "user_ns", 0, Align::left, [](const Event& e) -> Value { return e.user_ns; }}),
    };
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("capable",
                   "Trace capability checks (cap_capable()) with their verdicts, from the "
                   "capability:cap_capable tracepoint (Linux 6.14 and later). Every check is "
                   "shown: the tracepoint does not say whether the kernel audits it (AUDIT -).",
                   examples);
    bool extra = false;
    std::string unique;
    cli.add_common();
    cli.add_streaming();
    cli.flag("-x,--extra-fields", extra,
             "extra fields: TID and the user namespace (inode) of the resource");
    cli.option("-u,--unique", unique, "show each capability and verdict once per pid or cgroup")
        .one_of({"pid", "cgroup"});
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        tpkit::require_event({"capability", "cap_capable"}, "Linux 6.14 and later have it");
        tpkit::run_stream<capable_bpf, Event>(cli, columns(extra), [&](capable_bpf& skel) {
            skel.rodata->unique_by = unique == "pid"      ? CAPABLE_UNIQUE_PID
                                     : unique == "cgroup" ? CAPABLE_UNIQUE_CGROUP
                                                          : CAPABLE_UNIQUE_OFF;
        });
    });
}
