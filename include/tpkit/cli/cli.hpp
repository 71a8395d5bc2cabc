// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Command-line conventions shared by every tool (CLI11): the same flags mean the same thing
// everywhere, errors are one line with a documented exit code, --help ends with EXAMPLES.
// CLI11 itself is only in src/cli/cli.cpp: compiled in every file that includes it, its header
// costs each tool more time than the tool's own code.
#pragma once

#include "tpkit/process/clock.hpp"
#include "tpkit/support/error.hpp"

#include <chrono>
#include <ctime>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace tpkit {

struct CommonOptions {
    std::string tool;       // the tool's name, which its stderr lines start with
    std::uint32_t pid = 0;  // -p/--pid: only this process (tgid)
    std::uint32_t tid = 0;  // -t/--tid: only this thread
    std::optional<std::uint32_t> uid; // -u/--uid: only tasks of this user
    std::string cgroup;     // --cgroup: only tasks in this cgroup v2 directory
    std::string comm;       // --comm: only tasks with this command name
    std::optional<std::uint32_t> cpu; // --cpu: only events on this CPU
    // --include-self: the tool's own process too. add_task_filters() makes it false (the tool
    // left out); tools without task filters leave nothing out.
    bool include_self = true;
    bool timestamp = false; // -T/--timestamp
    double duration = 0;    // -d/--duration seconds, 0 = until interrupted
    bool json = false;      // --json: one JSON object per line
    Clock clock = Clock::wall; // --clock: of "time_ns" in JSON
    bool verbose = false;   // -v/--verbose: libbpf's own log
    // Aggregating tools: [interval] [count]
    double interval = 0;    // seconds, 0 = print once at the end
    std::uint64_t count = 0; // 0 = unlimited
    // Streaming tools
    bool perf_buffer = false;
    // Tools that size maps from options: --max-map-memory MiB, 0 = the default limit
    std::uint64_t max_map_memory_mib = 0;
    // --ready-fd: told "ready\n" (then closed) once tracing has begun; -1 = none
    int ready_fd = -1;
};

// What the shell completions offer as an option's value, by the option's name ("--unit"): see
// CliOption::complete().
using CompletionValues = std::map<std::string, std::string>;

// An option as it is added (Cli::option(), Cli::flag()), to refine: each call is CLI11's
// Option call of the same name, and returns the option for the next.
class CliOption {
public:
    CliOption(CLI::Option* option, CompletionValues& completions)
        : option_(option), completions_(&completions)
    {
    }

    CliOption required();
    // Given together with `other` (or the option named so, "--json"): a usage error.
    CliOption excludes(CliOption other);
    CliOption excludes(const std::string& name);
    // Several values in one argument, split at `separator` ("-f a,b").
    CliOption delimiter(char separator);
    // false: a repeatable option takes one value per occurrence, never the arguments after it.
    CliOption allow_extra_args(bool allow);
    // What --help calls the value ("PORTS").
    CliOption type_name(std::string name);

    // Checks of the value, shown after its type in --help as CLI11 shows them.
    // One of `values` (CLI::IsMember): "{ns,us,ms}".
    CliOption one_of(std::vector<std::string> values);
    // From `min` to `max` (CLI::Range), read as a T and said as T is printed: "UINT in [1 - 4]".
    // Defined in cli.cpp for int, unsigned, unsigned long and double.
    template <class T>
    CliOption range(T min, T max);
    // More than 0 (CLI::PositiveNumber).
    CliOption positive();
    // `problem` returns what is wrong with a value, empty when nothing is; `description`
    // follows the type in --help (CLI::Validator).
    CliOption check(std::function<std::string(const std::string&)> problem, std::string description);

    // What the shell completions offer as the value (--completion-options; one_of() sets its
    // values): words, and words that completions/tpkit.bash makes into values: @disk (block
    // devices and partitions), @file, @fields (of the first event named), @match (tplat's
    // START_FIELD==END_FIELD). "@list ..." first: several values, separated by commas.
    CliOption complete(std::string words);

private:
    CLI::Option* option_;
    CompletionValues* completions_;
};

class Cli {
public:
    // examples: the lines shown under EXAMPLES at the end of --help.
    Cli(std::string name, std::string description, std::string examples);
    ~Cli();
    Cli(const Cli&) = delete; // its options point into it
    Cli& operator=(const Cli&) = delete;

    // A tool's own options. names: "-x,--long" (a positional argument: "name"), as CLI11 has them.
    CliOption flag(std::string names, bool& value, std::string description);
    // A flag that calls `set` when given.
    CliOption flag_callback(std::string names, std::function<void()> set, std::string description);
    // An option whose value is converted into `value`; defined in cli.cpp for every T the tools
    // use (another is a link error): CLI11's conversion and type name (UINT, TEXT) of T.
    template <class T>
    CliOption option(std::string names, T& value, std::string description);
    // An option whose value, as text, is given to `take` (after its checks).
    CliOption option_function(std::string names, std::function<void(const std::string&)> take,
                               std::string description);
    // Takes back an option added before (by add_common()), so that the tool can use its name.
    void remove_option(const std::string& name);

    const CommonOptions& options() const { return options_; }
    const std::string& name() const { return name_; }

    // add_task_filters() and add_run_options(): every tool whose events happen in the context
    // of the task they concern has them.
    void add_common();
    // -p, -t, -u, --cgroup, --comm, --cpu, --include-self: which tasks' events to show.
    // The short forms of the common options are bcc's: where libbpf-tools has a tool of this
    // name (src/cli/bcc_short_flags.tsv), an option takes the letter that tool gives the same long
    // option (-c for --cgroup, -t for --timestamp in execsnoop), and keeps no letter of its own
    // that the tool gives another meaning (-t is not --tid there).
    void add_task_filters();
    // After add_common(), for tools whose events the tool's own process never causes (packets,
    // TCP state changes and retransmits): its process is not left out, and --include-self is not
    // offered. Leaving out the current task would drop the events of the interrupts (softirqs)
    // that come while the tool itself runs, which are the system's.
    void keep_own_process();
    // -T, -d, --json, --clock, -v. Alone for tools whose events run in no task's context of their own
    // (a segment received in softirq), where a task filter would mislead.
    void add_run_options();
    // Positional [interval] [count], like bcc's aggregating tools.
    void add_interval_count();
    // -i/--interval SECONDS as well, for tools whose bcc original takes the interval so.
    void add_interval_option();
    // --perf-buffer, for tools that stream events.
    void add_streaming();
    // -T/--time, bcc's execsnoop and tcplife's flag for a TIME column of the time of day:
    // tpkit's TIME column is that already, unless --timestamp makes it seconds since start.
    void add_time_of_day();
    // --max-map-memory, for tools whose options size their maps (--max-keys).
    void add_map_memory();
    // --cpu alone (add_task_filters() has it), for tools whose events belong to no task.
    void add_cpu_filter();
    // -d/--disk DISK, as bcc's block tools have it (--duration then has no short form).
    void add_disk(std::string& disk);

    // Parses; on --help prints it and returns Exit::ok; on a usage error prints one line and
    // returns Exit::usage; returns nullopt when the tool should run.
    std::optional<Exit> parse(int argc, char** argv);
    // Parses options given as a list (a configuration's): any error or --help is
    // Error(usage) with CLI11's one-line message.
    void parse_args(const std::vector<std::string>& args);

private:
    // "-x,--name" or "--name": see add_task_filters().
    std::string common_names(char usual_letter, const std::string& long_name) const;
    void release_short_duration();

    std::string name_;
    // The short flags of libbpf-tools' tool of this name: letter → long name ("-" for none).
    std::map<char, std::string> bcc_flags_;
    std::unique_ptr<CLI::App> app_;
    CommonOptions options_;
    CLI::Option* duration_ = nullptr;
    CompletionValues completions_;
};

// Validates --comm (the kernel keeps 15 characters) and copies it into a BPF char[16].
void copy_comm(std::string_view comm, volatile char (&dst)[16]);

} // namespace tpkit
