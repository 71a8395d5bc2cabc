// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What sigsnoop and killsnoop share: one BPF program, its options and its columns. killsnoop is
// sigsnoop -k under the name bcc's users type.
#pragma once

#include <tpkit/tools/sigsnoop.h>
#include "sigsnoop.skel.h"

#include <tpkit/process/signals.hpp>
#include <tpkit/run/stream.hpp>
#include <tpkit/run/tool.hpp>

#include <string>

namespace tpkit::sigsnoop {

using Event = sigsnoop_event;

struct Options {
    bool kill_calls = false; // -k: kill(), tkill(), tgkill() and their results
    bool failed_only = false;
    bool names = false;      // -n: SIG as a name
    std::string signals;     // -s: a list of names or numbers
    std::int32_t target_pid = 0;
};

// -k, -x, -s, -n and --tpid. killsnoop is sigsnoop -k, as in libbpf-tools (where it is sigsnoop
// under another name), and takes -k too.
inline void add_options(Cli& cli, Options& options)
{
    cli.flag("-k,--kill", options.kill_calls,
             options.kill_calls ? "kill(), tkill() and tgkill() calls, as always here"
                                : "kill(), tkill() and tgkill() calls instead, with their results");
    cli.flag("-x,--failed", options.failed_only,
             options.kill_calls ? "only calls that failed"
                                : "only signals not delivered: ignored, already pending "
                                  "or over the queue limit");
    cli.option("-s,--signal", options.signals,
               "only these signals: names or numbers, comma-separated (9,TERM,SIGUSR1)");
    cli.flag("-n,--name", options.names, "signal names (SIGKILL) instead of numbers");
    cli.option("--tpid", options.target_pid, "only signals sent to this PID (or TID)")
        .range(1, 1 << 22);
}

namespace detail {

// What the kernel did with a generated signal: its TRACE_SIGNAL_* by name.
inline Value generate_result(const Event& e)
{
    static constexpr std::string_view names[] = {"delivered", "ignored", "already_pending",
                                                 "overflow_fail", "lose_info"};
    if (e.result >= 0 && e.result < 5)
        return names[e.result];
    return std::to_string(e.result); // text in JSON too: "result" is a name

}

// With -k: the call that sent it.
inline Value call_name(const Event& e)
{
    static constexpr std::string_view names[] = {"kill", "tkill", "tgkill"};
    if (e.call < SIGSNOOP_KILL || e.call > SIGSNOOP_TGKILL)
        return absent;
    return names[e.call - SIGSNOOP_KILL];
}

// SIG with -n: signal 0 (a kill() that only checks) and out-of-range numbers stay numbers.
inline Value signal_name_or_number(const Event& e)
{
    std::string_view name = signal_name(e.sig);
    if (name.empty())
        return e.sig;
    return name;
}

inline Value signal_name_if_any(const Event& e)
{
    std::string_view name = signal_name(e.sig);
    if (name.empty())
        return absent;
    return name;
}

} // namespace detail

// bcc's columns: TIME PID COMM SIG TPID TCOMM RESULT.
inline Columns<Event> columns(const Options& options)
{
    using tpkit::Value;
    Column<Event> sig_number{"SIG", "sig", 12, Align::left,
                             [](const Event& e) -> Value { return e.sig; }};
    Column<Event> sig_name{"SIG", "sig", 12, Align::left, detail::signal_name_or_number};
    // A call's return is "ret", as every syscall's in JSON; "result" is a signal's fate.
    Column<Event> result_of_call{"RESULT", "ret", 0, Align::left,
                                 [](const Event& e) -> Value { return e.result; }};
    Column<Event> result_of_signal{"RESULT", "result", 0, Align::left, detail::generate_result};
    return {
        time_column<Event>([](const Event& e) -> Value { return e.task.timestamp_ns; }),
        {"PID", "pid", 7, Align::right, [](const Event& e) -> Value { return e.task.pid; }},
        json_column<Event>("tid", [](const Event& e) -> Value { return e.task.tid; }),
        {"COMM", "comm", 16, Align::left, [](const Event& e) -> Value { return text_of(e.task.comm); }},
        options.names ? sig_name : sig_number,
        json_column<Event>("sig_name", detail::signal_name_if_any),
        {"TPID", "tpid", 7, Align::right, [](const Event& e) -> Value { return e.target_pid; }},
        {"TCOMM", "tcomm", 16, Align::left,
         [](const Event& e) -> Value {
             if (e.target_comm[0] == '\0')
                 return absent; // no signal reached a task: a failed call, or signal 0
             return text_of(e.target_comm);
         }},
        options.kill_calls ? result_of_call : result_of_signal,
        json_column<Event>("call", detail::call_name),
    };
}

// Loads the one BPF program for the options and streams until stopped.
inline void run(const Cli& cli, const Options& options)
{
    const std::uint64_t signal_set = options.signals.empty() ? 0 : parse_signal_set(options.signals);
    run_stream<sigsnoop_bpf, Event>(cli, columns(options), [&](sigsnoop_bpf& skel) {
        skel.rodata->kill_calls = options.kill_calls;
        skel.rodata->failed_only = options.failed_only;
        skel.rodata->signal_set = signal_set;
        skel.rodata->target_pid = options.target_pid;
        const char* what = "cannot choose sigsnoop's programs";
        for (bpf_program* call : {skel.progs.kill_entry, skel.progs.kill_exit, skel.progs.tkill_entry,
                                  skel.progs.tkill_exit, skel.progs.tgkill_entry, skel.progs.tgkill_exit})
            check_libbpf(bpf_program__set_autoload(call, options.kill_calls), what);
    });
}

} // namespace tpkit::sigsnoop
