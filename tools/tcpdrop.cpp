// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcpdrop: every TCP segment the kernel drops, with the kernel's reason and, with -s, the kernel
// stack that dropped it, from the raw tracepoint kfree_skb. Reasons are named from the running
// kernel's BTF (enum skb_drop_reason), whose numbers differ between kernels.
#include <tpkit/tools/tcpdrop.h>
#include "tcpdrop.skel.h"

#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/run/inet.hpp>
#include <tpkit/run/stack_symbolizer.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr const char* examples = R"(  tcpdrop                   # every TCP segment the kernel drops, with its reason
  tcpdrop -s                # with the kernel stack that dropped it
  tcpdrop -4                # only IPv4 segments
  tcpdrop --all-reasons     # also NOT_SPECIFIED drops and consumed segments
  tcpdrop --json | jq .     # one JSON object per drop
)";

// A drop as shown: the event, its reason's name and, with -s, its stack.
struct Drop {
    tcpdrop_event event;
    std::string reason;
    std::vector<std::string> stack;
};

// bcc's columns, STATE and FLAGS apart, then REASON; ADDR:PORT in text, each part its own member
// in JSON; with -s the stack follows the row in text, one frame a line, and is "kernel_stack" in
// JSON.
tpkit::Columns<Drop> columns(bool stacks)
{
    std::vector<tpkit::Column<Drop>> list{
        tpkit::time_column<Drop>([](const Drop& d) -> tpkit::Value { return d.event.task.timestamp_ns; }),
        {"PID", "pid", 7, tpkit::Align::left, [](const Drop& d) -> tpkit::Value { return d.event.task.pid; }},
        tpkit::json_column<Drop>("tid", [](const Drop& d) -> tpkit::Value { return d.event.task.tid; }),
        tpkit::json_column<Drop>("comm", [](const Drop& d) -> tpkit::Value { return tpkit::text_of(d.event.task.comm); }),
        {"IP", "ip", 2, tpkit::Align::left,
         [](const Drop& d) -> tpkit::Value { return tpkit::ip_version(d.event.tuple); }},
        {"SADDR:SPORT", "", 20, tpkit::Align::left,
         [](const Drop& d) -> tpkit::Value { return tpkit::local_endpoint_text(d.event.tuple); }},
        tpkit::json_column<Drop>("saddr", [](const Drop& d) -> tpkit::Value { return tpkit::local_address_text(d.event.tuple); }),
        tpkit::json_column<Drop>("sport", [](const Drop& d) -> tpkit::Value { return d.event.tuple.sport; }),
        {">", "", 1, tpkit::Align::left, [](const Drop&) -> tpkit::Value { return ">"; }},
        {"DADDR:DPORT", "", 20, tpkit::Align::left,
         [](const Drop& d) -> tpkit::Value { return tpkit::remote_endpoint_text(d.event.tuple); }},
        tpkit::json_column<Drop>("daddr", [](const Drop& d) -> tpkit::Value { return tpkit::remote_address_text(d.event.tuple); }),
        tpkit::json_column<Drop>("dport", [](const Drop& d) -> tpkit::Value { return d.event.tuple.dport; }),
        {"STATE", "state", 11, tpkit::Align::left, [](const Drop& d) -> tpkit::Value {
             if (d.event.state == TCPDROP_NO_STATE)
                 return tpkit::absent;
             return tpkit::tcp_state_name(d.event.state);
         }},
        {"FLAGS", "tcp_flags", 11, tpkit::Align::left,
         [](const Drop& d) -> tpkit::Value { return tpkit::tcp_flags_text(d.event.tcp_flags); }},
        {"REASON", "reason", 0, tpkit::Align::left, [](const Drop& d) -> tpkit::Value { return d.reason; }},
    };
    if (stacks)
        list.push_back(tpkit::json_column<Drop>("kernel_stack", [](const Drop& d) -> tpkit::Value { return tpkit::TextAndJson{"", tpkit::json_string_array(d.stack)}; }));
    return tpkit::Columns<Drop>(std::move(list));
}

// The running kernel's reason names; Error(unknown_target) on a kernel without the tracepoint or
// whose skb:kfree_skb carries no reason. The tracepoint is looked for only when the reasons are
// missing: every kernel with them has it (one read of the kernel's BTF instead of two).
std::map<std::uint32_t, std::string> reason_names()
{
    auto names = tpkit::drop_reason_names(tpkit::kernel_enum_values("skb_drop_reason").value_or(
        std::map<std::int64_t, std::string>{}));
    if (!names.empty())
        return names;
    if (!tpkit::kernel_has_raw_tracepoint("kfree_skb"))
        throw tpkit::Error(tpkit::Exit::unknown_target, "this kernel has no skb:kfree_skb tracepoint");
    throw tpkit::Error(tpkit::Exit::unknown_target,
                       "this kernel's skb:kfree_skb tracepoint carries no drop reason (its BTF has "
                       "no enum skb_drop_reason: Linux 5.17 and later have it)");
}

std::string reason_text(const std::map<std::uint32_t, std::string>& names, std::uint32_t reason)
{
    auto it = names.find(reason);
    return it != names.end() ? it->second : fmt::format("UNKNOWN({})", reason);
}

struct Options {
    tpkit::InetFilter filter;
    bool stacks = false, all_reasons = false, offsets = false;
    std::uint32_t stack_storage = 1024;
};

void run(const tpkit::Cli& cli, const Options& o)
{
    const auto names = reason_names();
    const tpkit::CommonOptions& options = cli.options();
    const tpkit::Columns<Drop> shown = columns(o.stacks);
    tpkit::Output& out = tpkit::standard_output();
    tpkit::MonotonicClock clock;
    std::optional<tpkit::StackSymbolizer> symbolizer;
    bpf_map* stack_map = nullptr;
    tpkit::run_stream<tcpdrop_bpf, tcpdrop_event>(
        cli,
        [&](const tcpdrop_event& e) {
            Drop drop{e, reason_text(names, e.reason), {}};
            if (symbolizer)
                drop.stack = symbolizer->kernel(e.kernel_stack_id);
            shown.row(drop, options, clock, out);
            if (o.stacks && !options.json) {
                for (const auto& frame : drop.stack)
                    out.print("\t{}\n", frame);
                out.append("\n");
            }
        },
        [&](tcpdrop_bpf& skel) {
            tpkit::apply_inet_filter(skel, o.filter);
            skel.rodata->all_reasons = o.all_reasons;
            skel.rodata->kernel_stacks = o.stacks;
            stack_map = skel.maps.stacks;
            // Without -s the map holds nothing: the smallest there is.
            tpkit::check_libbpf(bpf_map__set_max_entries(skel.maps.stacks, o.stacks ? o.stack_storage : 1),
                                "cannot size the stack map");
        },
        [&] {
            if (o.stacks) {
                symbolizer.emplace(bpf_map__fd(stack_map), TCPDROP_MAX_STACK_DEPTH, TCPDROP_NO_STACK,
                                   o.offsets);
                symbolizer->load_kernel_symbols();
            }
            shown.header(options, out);
        },
        [&] {
            if (symbolizer)
                symbolizer->report_missed("tcpdrop");
        });
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tcpdrop",
                   "Trace TCP segments the kernel drops, with the kernel's drop reason (skb:kfree_skb). "
                   "Drops without a reason (NOT_SPECIFIED) are left out unless --all-reasons.",
                   examples);
    Options o;
    cli.add_common();
    cli.keep_own_process();
    cli.add_streaming();
    tpkit::add_family_options(cli, o.filter, "segments");
    cli.flag("-s,--stack", o.stacks, "show the kernel stack that dropped each segment");
    cli.flag("--offsets", o.offsets, "with -s, show each frame's offset in its function");
    cli.option("--stack-storage-size", o.stack_storage, "with -s, distinct stacks kept (default 1024)")
        .range(1u, 1u << 20);
    cli.flag("--all-reasons", o.all_reasons,
             "also drops with reason NOT_SPECIFIED, and segments freed as consumed "
             "(CONSUMED, NOT_DROPPED_YET) where the kernel reports them here");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] { run(cli, o); });
}
