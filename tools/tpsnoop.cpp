// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpsnoop: prints the events of any tracepoints as they happen, decoded from their format.
#include <tpkit/bpf/skeleton.hpp>
#include <tpkit/cli/cli.hpp>
#include "engine/decode.hpp"
#include <tpkit/engine/engine.hpp>
#include <tpkit/process/clock.hpp>
#include <tpkit/process/stop.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>
// After the tpkit headers: the skeleton's rodata uses their structs.
#include "tpsnoop.skel.h"

#include <fmt/format.h>

#include <map>

namespace {

constexpr const char* examples = R"(  tpsnoop sched:sched_process_fork              # every fork, as the kernel's trace_pipe prints it
  tpsnoop syscalls:sys_enter_openat -f filename --comm bash   # filename="/etc/passwd", read in BPF
  tpsnoop syscalls:sys_enter_unlinkat --filter 'pathname ~ "/tmp/*"'
  tpsnoop 'sched:sched_process_*' --json        # several events at once, one JSON object each
  tpsnoop syscalls:sys_enter_read --filter 'count > 65536 && fd != 0'
  tpsnoop net:netif_receive_skb --perf-buffer -T
)";

struct Options {
    std::vector<std::string> events;
    std::vector<std::string> filters; // --filter, each for every event or SYSTEM:EVENT=EXPR
    std::vector<std::string> fields;
    bool classic = false;
};

class SnoopPrinter {
public:
    SnoopPrinter(const tpkit::CommonOptions& common, const std::vector<tpkit::EventPlan>& plans,
                 const std::vector<std::string>& selected)
        : common_(common), raw_fields_(!selected.empty())
    {
        for (const auto& plan : plans) {
            events_.emplace(plan.format.id,
                            Event{&plan.format, tpkit::fields_to_print(plan.format, selected)});
            kernel_text_.add_file(plan.format, tpkit::live_events_root() / plan.name.system /
                                                   plan.name.event / "format");
        }
        if (!raw_fields_ || common.json) // before privileges are dropped
            kernel_text_.read_privileged_files();
    }

    void print(std::span<const std::byte> data)
    {
        tpkit::SnoopEvent event;
        if (!tpkit::SnoopEvent::parse(data, event))
            return;
        auto it = events_.find(event.event_id());
        if (it == events_.end())
            return;
        const Event& e = it->second;
        std::uint64_t ns = event.header.timestamp_ns;
        if (common_.json) {
            tpkit::append_snoop_json(lines_, event, *e.format, e.fields, "time_ns",
                                     clock_.time_ns(ns, common_.clock), &kernel_text_);
        } else {
            // trace_pipe shows seconds of its clock; -T, seconds since tpsnoop started.
            char time[48];
            auto end = common_.timestamp
                           ? fmt::format_to_n(time, sizeof(time), "{:.6f}",
                                              clock_.seconds_since_start(ns)).out
                           : fmt::format_to_n(time, sizeof(time), "{}.{:06}", ns / 1'000'000'000,
                                              ns % 1'000'000'000 / 1000).out;
            tpkit::append_snoop_head(lines_, event, std::string_view(time, end - time));
            // The kernel's text unless -f asks for fields; the fields too when libtraceevent
            // cannot follow the event's print fmt.
            if (raw_fields_ || !kernel_text_.append(lines_, *e.format, event.record, event.strings,
                                                       event.header.jiffies))
                tpkit::append_snoop_fields(lines_, event, *e.format, e.fields);
        }
        lines_ += '\n';
        if (lines_.size() >= write_threshold)
            out_.write_available();
    }

private:
    struct Event {
        const tpkit::EventFormat* format;
        std::vector<const tpkit::Field*> fields;
    };
    const tpkit::CommonOptions& common_;
    bool raw_fields_;
    std::map<std::uint32_t, Event> events_;
    tpkit::KernelText kernel_text_;
    tpkit::MonotonicClock clock_;
    static constexpr std::size_t write_threshold = 64 * 1024;
    tpkit::Output& out_ = tpkit::standard_output();
    std::string& lines_ = out_.buffer(); // appended in place: no allocation once it has grown
};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tpsnoop",
                   "Print the events of any tracepoints as the kernel's trace output does, decoded "
                   "from their format.",
                   examples);
    Options options;
    cli.option("--filter", options.filters,
               "only events matching this expression (the kernel's filter grammar); "
               "SYSTEM:EVENT=EXPR for those events alone; repeatable, all must match")
        .allow_extra_args(false)
        .type_name("EXPR");
    cli.option("-f,--fields", options.fields,
               "print only these fields, raw (FIELD,FIELD...), instead of the kernel's text "
               "of the event; common_pid is the thread and "
               "common_type the event ID, common_flags and common_preempt_count are not "
               "visible to BPF")
        .delimiter(',')
        .complete("@list @fields");
    tpkit::add_classic_option(cli, options.classic);
    cli.add_common();
    cli.add_streaming();
    cli.option("event", options.events, "tracepoints SYSTEM:EVENT or globs").required();
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        const tpkit::CommonOptions& common = cli.options();
        auto plans = tpkit::plan_events(tpkit::live_events_root(), options.events,
                                          tpkit::EventFilters(options.filters));
        tpkit::prepare_snoop(plans, options.fields);

        auto transport = tpkit::choose_transport(common.perf_buffer);
        auto planned = tpkit::plan_instances(plans, options.classic);
        auto programs = [](tpsnoop_bpf& skel) {
            return tpkit::EnginePrograms{skel.progs.snoop_event, skel.progs.snoop_syscall,
                                         skel.maps.tpkit_syscall_events,
                                         skel.maps.tpkit_filter_user_str,
                                         skel.maps.syscall_strings_scratch};
        };
        std::vector<tpkit::Skeleton<tpsnoop_bpf>> instances;
        for (const auto& instance : planned) {
            if (!instances.empty() && tpkit::stop_pending())
                break; // Ctrl-C while loading: what is loaded runs to the (empty) end at once
            auto skel = tpkit::Skeleton<tpsnoop_bpf>::open("tpsnoop");
            skel->rodata->tpkit_filter = instance.filter;
            skel->rodata->tpkit_config = instance.config;
            tpkit::prepare_instance(programs(*skel), instance);
            tpkit::apply_task_filters(*skel, common);
            tpkit::configure_transport(*skel, transport);
            if (!instances.empty()) {
                auto first = tpkit::transport_maps(*instances.front());
                auto maps = tpkit::transport_maps(*skel);
                tpkit::share_map(first.ringbuf, maps.ringbuf);
                tpkit::share_map(first.perfbuf, maps.perfbuf);
                tpkit::share_map(first.drops, maps.drops);
            }
            if (instances.empty()) // counted on the first, before anything is loaded
                tpkit::raise_fd_limit_for(planned.size(), skel->obj);
            skel.load();
            instances.push_back(std::move(skel));
        }

        SnoopPrinter printer(common, plans, options.fields);
        tpkit::EventReader reader(tpkit::transport_maps(*instances.front()), transport,
                                  [&](std::span<const std::byte> data) { printer.print(data); });
        // However the run ends (its reader gone among the ways): the programs off, then every
        // link detached at once.
        struct Attached {
            std::vector<tpkit::Skeleton<tpsnoop_bpf>>& instances;
            std::vector<tpkit::Link> links;
            ~Attached()
            {
                tpkit::arm_instances(instances, false);
                tpkit::detach_all(links);
            }
        } attached{instances, {}};
        auto& links = attached.links;
        tpkit::arm_instances(instances, true); // each event streams from its attach
        for (std::size_t i = 0; i < instances.size(); i++) {
            if (!links.empty() && tpkit::stop_pending())
                break; // Ctrl-C while attaching: each attach would cost its detach too
            links.push_back(tpkit::attach_instance(programs(*instances[i]), planned[i], plans));
        }
        tpkit::say_attached_before_stop(cli.name(), links.size(), planned.size());
        tpkit::StopSignal stop(common);
        tpkit::drop_privileges(); // reading and detaching need none
        tpkit::run_stream(reader, stop);
        tpkit::report_lost(cli.name(), reader.lost(), common.json);
    });
}
