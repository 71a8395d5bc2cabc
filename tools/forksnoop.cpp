// forksnoop: every fork as it happens, from sched:sched_process_fork.
#include "forksnoop.skel.h"

#include <tpkit/cli.hpp>
#include <tpkit/forksnoop.h>
#include <tpkit/json.hpp>
#include <tpkit/skeleton.hpp>
#include <tpkit/tracefs.hpp>

#include <fmt/core.h>

#include <cstring>

namespace {

constexpr const char* examples = R"(  forksnoop                 # every fork and thread creation
  forksnoop -p 181          # only forks made by PID 181
  forksnoop --comm bash     # only forks made by tasks named bash
  forksnoop --raw           # raw tracepoint, reading task_struct with CO-RE
  forksnoop --json | jq .   # one JSON object per fork
)";

std::string_view comm_of(const char (&comm)[TPKIT_COMM_LEN])
{
    return {comm, strnlen(comm, TPKIT_COMM_LEN)};
}

class ForkPrinter {
public:
    explicit ForkPrinter(const tpkit::CommonOptions& options) : options_(options) {}

    void header() const
    {
        if (options_.json)
            return;
        out_.print("{:<{}} {:<16} {:>7} {:<16} {:>7} {:>7} {}\n",
                   options_.timestamp ? "TIME(s)" : "TIME", time_width(), "PCOMM", "PPID", "COMM",
                   "PID", "TID", "KIND");
    }

    void print(const forksnoop_event& e) const
    {
        const char* kind = e.is_thread ? "thread" : "process";
        if (options_.json) {
            out_.print("{}\n", tpkit::JsonObject()
                                   .add("time_ns", clock_.realtime_ns(e.timestamp_ns))
                                   .add("cpu", e.cpu)
                                   .add("parent_comm", comm_of(e.parent_comm))
                                   .add("parent_pid", e.parent_pid)
                                   .add("parent_tid", e.parent_tid)
                                   .add("child_comm", comm_of(e.child_comm))
                                   .add("child_pid", e.child_pid)
                                   .add("child_tid", e.child_tid)
                                   .add("kind", kind)
                                   .str());
            return;
        }
        std::string time = options_.timestamp
                               ? fmt::format("{:.6f}", clock_.seconds_since_start(e.timestamp_ns))
                               : clock_.wall_time(e.timestamp_ns);
        out_.print("{:<{}} {:<16} {:>7} {:<16} {:>7} {:>7} {}\n", time, time_width(),
                   comm_of(e.parent_comm),
                   e.parent_pid, comm_of(e.child_comm), e.child_pid, e.child_tid, kind);
    }

private:
    int time_width() const { return options_.timestamp ? 14 : 8; }

    const tpkit::CommonOptions& options_;
    tpkit::MonotonicClock clock_;
    tpkit::Output& out_ = tpkit::standard_output();
};

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("forksnoop", "Trace every fork (new processes and threads).", examples);
    bool raw = false;
    cli.add_common();
    cli.add_streaming();
    cli.app().add_flag("--raw", raw,
                       "attach a raw tracepoint and read the parent and child task_struct");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return tpkit::run_tool(cli.name(), [&] {
        const tpkit::CommonOptions& options = cli.options();
        tpkit::tracefs_root(); // libbpf finds tracepoint ids there
        auto skel = tpkit::Skeleton<forksnoop_bpf>::open("forksnoop");
        skel->rodata->tpkit_target_tgid = options.pid;
        tpkit::copy_comm(options.comm, skel->rodata->tpkit_target_comm);
        bpf_program__set_autoload(skel->progs.fork_raw_tp, raw);
        bpf_program__set_autoload(skel->progs.fork_tp, !raw);
        bpf_program__set_autoload(skel->progs.record_clone_flags, !raw);
        auto transport = tpkit::choose_transport(options.perf_buffer);
        tpkit::configure_transport(*skel, transport);
        skel.load();

        ForkPrinter printer(options);
        tpkit::EventReader reader(tpkit::transport_maps(*skel), transport,
                                  [&](std::span<const std::byte> data) {
                                      forksnoop_event e{};
                                      std::memcpy(&e, data.data(), std::min(data.size(), sizeof(e)));
                                      printer.print(e);
                                  });
        skel.attach();
        tpkit::StopSignal stop(options.duration);
        printer.header();
        tpkit::run_stream(reader, stop);
        tpkit::report_lost(cli.name(), reader.lost(), options.json);
    });
}
