// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/cli/cli.hpp"

#include "cli_docs.hpp"
#include "tpkit/bpf/maps.hpp"
#include "tpkit/bpf/program_stats.hpp"
#include "tpkit/bpf/skeleton.hpp"
#include "tpkit/bpf/transport.hpp"
#include "tpkit/output/metrics.hpp"
#include "tpkit/process/clock.hpp"
#include "tpkit/support/version.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace tpkit {
namespace {

// CLI11's own range messages print DBL_MAX in full; ours name the value and what is wanted.
const CLI::Validator positive_number(
    [](const std::string& text) {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(v > 0))
            return fmt::format("'{}' is not a positive number", text);
        if (v > 1e9)
            return fmt::format("'{}' is more than 1e9 seconds", text);
        return std::string();
    },
    "SECONDS");

const CLI::Validator positive_integer(
    [](const std::string& text) {
        bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || std::strtoull(text.c_str(), nullptr, 10) == 0 || text.size() > 19)
            return fmt::format("'{}' is not a positive whole number", text);
        return std::string();
    },
    "N");

// --ready-fd: a descriptor the tool inherited open for writing, other than stdin, stdout and
// stderr (the word would be mixed into the output).
const CLI::Validator writable_descriptor(
    [](const std::string& text) {
        bool digits = !text.empty() && text.size() < 10 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits)
            return fmt::format("'{}' is not a file descriptor", text);
        const int fd = std::atoi(text.c_str());
        if (fd <= STDERR_FILENO)
            return fmt::format("{} is standard input, output or error", fd);
        const int flags = fcntl(fd, F_GETFL);
        if (flags < 0)
            return fmt::format("{} is not an open file descriptor", fd);
        if ((flags & O_ACCMODE) == O_RDONLY)
            return fmt::format("{} is not open for writing", fd);
        return std::string();
    },
    "");

// An option given an empty value ("", or only its delimiters: `-f ,`) would otherwise act as if
// it were not given, or take the next argument as its value: refused here for every option of
// every tool. ARGS: the arguments after the program's name, in order.
void refuse_empty_values(const CLI::App& app, const std::vector<std::string>& args)
{
    for (std::size_t i = 0; i < args.size(); i++) {
        const std::string& arg = args[i];
        if (arg == "--")
            return;
        if (arg.size() < 2 || arg[0] != '-')
            continue;
        std::string name = arg;
        std::optional<std::string> value; // attached: --name=VALUE, -xVALUE
        if (arg[1] == '-') {
            if (auto eq = arg.find('='); eq != std::string::npos) {
                name = arg.substr(0, eq);
                value = arg.substr(eq + 1);
            }
        } else if (arg.size() > 2) {
            name = arg.substr(0, 2);
            value = arg.substr(2);
        }
        const CLI::Option* option = app.get_option_no_throw(name);
        if (!option || option->get_type_size_max() == 0)
            continue; // not an option, or a flag
        if (!value) {
            if (option->get_expected_min() == 0 || i + 1 == args.size())
                continue;
            value = args[i + 1];
        }
        const char delimiter = option->get_delimiter();
        if (value->empty() || (delimiter && value->find_first_not_of(delimiter) == std::string::npos))
            throw CLI::ValidationError(name, fmt::format("an empty value ('{}')", *value));
    }
}

// The kind of number an option takes, from the type CLI11 names in --help (UINT, INT, FLOAT).
enum class NumberKind { none, unsigned_integer, integer, floating };

NumberKind number_kind(const CLI::Option& option)
{
    const std::string type = option.get_type_name();
    return type.rfind("UINT", 0) == 0    ? NumberKind::unsigned_integer
           : type.rfind("INT", 0) == 0   ? NumberKind::integer
           : type.rfind("FLOAT", 0) == 0 ? NumberKind::floating
                                         : NumberKind::none;
}

// CLI11 reads "nan" and "inf" as numbers that every range and positivity check lets through
// (comparisons with NaN are false), and an unsigned option takes "-1" or 2^64 as a huge value:
// refused here for every option and positional argument of every tool, after parsing.
void refuse_unusable_numbers(const CLI::App& app)
{
    for (const CLI::Option* option : app.get_options()) {
        const NumberKind kind = number_kind(*option);
        const bool is_float = kind == NumberKind::floating;
        const bool is_unsigned = kind == NumberKind::unsigned_integer;
        if ((!is_float && !is_unsigned) || option->get_type_size_max() == 0) // a flag's count
            continue;
        for (const std::string& value : option->results()) {
            errno = 0;
            if (is_float && !std::isfinite(std::strtod(value.c_str(), nullptr)))
                throw CLI::ValidationError(option->get_name(),
                                           fmt::format("'{}' is not a finite number", value));
            if (is_unsigned && (value.find('-') != std::string::npos ||
                                (std::strtoull(value.c_str(), nullptr, 0), errno == ERANGE)))
                throw CLI::ValidationError(option->get_name(),
                                           fmt::format("'{}' is out of range", value));
        }
    }
}

// The message of a parse error. An unknown option is named first: what follows it was taken for
// something else and fails there (netrxlen --cgroup / → "interval: '/' is not a positive number").
std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e)
{
    std::vector<std::string> unknown = app.remaining();
    if (!unknown.empty() && !app.get_allow_extras())
        return CLI::ExtrasError(unknown).what();
    // CLI11's "Could not convert: --cpu = -1", said with the kind of value the option takes.
    const std::string text = e.what();
    const std::string_view prefix = "Could not convert: ";
    const auto equals = text.find(" = ");
    if (dynamic_cast<const CLI::ConversionError*>(&e) && text.rfind(prefix, 0) == 0 &&
        equals != std::string::npos) {
        const std::string name = text.substr(prefix.size(), equals - prefix.size());
        const CLI::Option* option = app.get_option_no_throw(name);
        const NumberKind number = option ? number_kind(*option) : NumberKind::none;
        const char* kind = number == NumberKind::unsigned_integer ? "a whole number from 0 in range"
                           : number == NumberKind::integer        ? "a whole number in range"
                           : number == NumberKind::floating       ? "a number"
                                                                  : "a value it takes";
        return fmt::format("{}: '{}' is not {}", name, text.substr(equals + 3), kind);
    }
    return text;
}

// Thrown by the hidden flags, like CLI11's CallForHelp: before any requirement is checked.
struct DocsRequest {
    enum What { man_page, completion_options } what;
};

// --help names an option's value as its man page does ("-u,--uid UID"), not by CLI11's type
// and checks ("UINT:UINT in [0 - 4294967294]").
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_option_opts(const CLI::Option* option) const override
    {
        std::string opts;
        if (takes_value(option)) {
            opts += " " + value_name(option);
            if (option->get_expected_max() == CLI::detail::expected_max_vector_size)
                opts += " ...";
            if (option->get_required())
                opts += " REQUIRED";
        }
        return opts;
    }

    std::string make_option_desc(const CLI::Option* option) const override
    {
        std::string description = option->get_description();
        std::string others;
        for (const CLI::Option* other : option->get_excludes())
            others += (others.empty() ? "" : " or ") + other->get_name();
        return others.empty() ? description : description + " (not with " + others + ")";
    }
};

// libbpf-tools' short flags of its tool named `tool`: letter → long name.
std::map<char, std::string> bcc_short_flags(std::string_view tool)
{
    static constexpr std::string_view table =
#include "bcc_short_flags.inc"
        ;
    std::map<char, std::string> flags;
    std::string_view rest = table;
    while (!rest.empty()) {
        std::string_view line = rest.substr(0, rest.find('\n'));
        rest.remove_prefix(std::min(rest.size(), line.size() + 1));
        std::array<std::string_view, 3> fields; // tool, letter, long name
        std::size_t field = 0;
        for (std::size_t start = 0; field < fields.size() && start <= line.size(); ++field) {
            const std::size_t tab = std::min(line.find('\t', start), line.size());
            fields[field] = line.substr(start, tab - start);
            start = tab + 1;
        }
        if (field == fields.size() && fields[0] == tool && fields[1].size() == 1)
            flags.emplace(fields[1][0], fields[2]);
    }
    return flags;
}

} // namespace

Cli::Cli(std::string name, std::string description, std::string examples)
    : name_(std::move(name)), bcc_flags_(bcc_short_flags(name_)),
      app_(std::make_unique<CLI::App>(std::move(description), name_))
{
    options_.tool = name_;
    claim_standard_fds(); // before anything is opened
    app_->footer("EXAMPLES:\n" + examples);
    app_->formatter(std::make_shared<HelpFormatter>());
    app_->get_formatter()->column_width(30);
    app_->set_version_flag(common_names('V', "version"), [name = name_] { return version_text(name); },
                           "Print the version, the git commit and libbpf's version and exit");
    // For the build, not in --help: the man page and the shell completions are made from these.
    app_->add_flag_callback("--man-page", [] { throw DocsRequest{DocsRequest::man_page}; })
        ->group("");
    app_->add_flag_callback("--completion-options",
                            [] { throw DocsRequest{DocsRequest::completion_options}; })
        ->group("");
}

Cli::~Cli() = default;

CliOption Cli::flag(std::string names, bool& value, std::string description)
{
    return CliOption(app_->add_flag(std::move(names), value, std::move(description)), completions_);
}

CliOption Cli::flag_callback(std::string names, std::function<void()> set, std::string description)
{
    return CliOption(
        app_->add_flag_callback(std::move(names), std::move(set), std::move(description)),
        completions_);
}

template <class T>
CliOption Cli::option(std::string names, T& value, std::string description)
{
    return CliOption(app_->add_option(std::move(names), value, std::move(description)), completions_);
}

// Every type of value a tool's option takes.
template CliOption Cli::option(std::string, std::string&, std::string);
template CliOption Cli::option(std::string, std::vector<std::string>&, std::string);
template CliOption Cli::option(std::string, int&, std::string);
template CliOption Cli::option(std::string, unsigned&, std::string);
template CliOption Cli::option(std::string, unsigned long&, std::string);
template CliOption Cli::option(std::string, double&, std::string);
template CliOption Cli::option(std::string, std::optional<std::uint32_t>&, std::string);
template CliOption Cli::option(std::string, std::optional<double>&, std::string);

CliOption Cli::option_function(std::string names, std::function<void(const std::string&)> take,
                               std::string description)
{
    return CliOption(
        app_->add_option_function<std::string>(std::move(names), take, std::move(description)),
        completions_);
}

void Cli::remove_option(const std::string& name)
{
    app_->remove_option(app_->get_option(name));
}

CliOption CliOption::required()
{
    option_->required();
    return *this;
}

CliOption CliOption::excludes(CliOption other)
{
    option_->excludes(other.option_);
    return *this;
}

CliOption CliOption::excludes(const std::string& name)
{
    option_->excludes(name);
    return *this;
}

CliOption CliOption::delimiter(char separator)
{
    option_->delimiter(separator);
    return *this;
}

CliOption CliOption::allow_extra_args(bool allow)
{
    option_->allow_extra_args(allow);
    return *this;
}

CliOption CliOption::type_name(std::string name)
{
    option_->option_text(std::move(name)); // value_name(): CLI11's type stays, for number_kind()
    return *this;
}

CliOption CliOption::one_of(std::vector<std::string> values)
{
    std::string words;
    for (const auto& value : values)
        words += (words.empty() ? "" : " ") + value;
    option_->check(CLI::IsMember(std::move(values)));
    return complete(std::move(words));
}

CliOption CliOption::complete(std::string words)
{
    (*completions_)[option_->get_name()] = std::move(words);
    return *this;
}

template <class T>
CliOption CliOption::range(T min, T max)
{
    option_->check(CLI::Range(min, max));
    return *this;
}

// The types of the bounds the tools give, each printed (and its values read) as its own.
template CliOption CliOption::range(int, int);
template CliOption CliOption::range(unsigned, unsigned);
template CliOption CliOption::range(unsigned long, unsigned long);
template CliOption CliOption::range(double, double);

CliOption CliOption::positive()
{
    option_->check(CLI::PositiveNumber);
    return *this;
}

CliOption CliOption::check(std::function<std::string(const std::string&)> problem,
                           std::string description)
{
    option_->check(CLI::Validator(std::move(problem), std::move(description)));
    return *this;
}

std::string Cli::common_names(char usual_letter, const std::string& long_name) const
{
    for (const auto& [letter, bcc_long_name] : bcc_flags_)
        if (bcc_long_name == long_name)
            return fmt::format("-{},--{}", letter, long_name);
    if (usual_letter && !bcc_flags_.contains(usual_letter))
        return fmt::format("-{},--{}", usual_letter, long_name);
    return "--" + long_name;
}

void Cli::add_common()
{
    add_task_filters();
    add_run_options();
}

void Cli::add_task_filters()
{
    app_->add_option(common_names('p', "pid"), options_.pid, "only the process with this PID (thread group)")
        ->check(positive_integer);
    app_->add_option(common_names('t', "tid"), options_.tid, "only the thread with this TID")
        ->check(positive_integer);
    app_->add_option(common_names('u', "uid"), options_.uid, "only tasks of the user with this UID")
        ->check(CLI::Range(0u, 4294967294u));
    app_->add_option(common_names(0, "cgroup"), options_.cgroup,
                     "only tasks in this cgroup v2 directory (e.g. /sys/fs/cgroup/system.slice)")
        ->option_text("DIR");
    app_->add_option(common_names(0, "comm"), options_.comm, "only tasks whose command name is COMM")
        ->check([](const std::string& v) {
            return v.empty() || v.size() > 15 ? std::string("must have 1 to 15 characters")
                                              : std::string();
        });
    add_cpu_filter();
    // What the tool itself does (opening tracefs files as it attaches, checking capabilities as
    // it drops them) is not what it was asked to watch.
    options_.include_self = false;
    app_->add_flag("--include-self", options_.include_self,
                   "also the tool's own process, which is left out by default");
}

void Cli::keep_own_process()
{
    options_.include_self = true;
    app_->remove_option(app_->get_option("--include-self"));
}

void Cli::add_cpu_filter()
{
    app_->add_option(common_names(0, "cpu"), options_.cpu, "only events on this CPU");
}

void Cli::add_run_options()
{
    app_->add_flag(common_names('T', "timestamp"), options_.timestamp,
                   "timestamps: HH:MM:SS on interval output, seconds since start on events");
    duration_ = app_->add_option(common_names('d', "duration"), options_.duration, "stop after SECONDS")
                    ->check(positive_number);
    app_->add_flag("--json", options_.json, "one JSON object per line (docs/json.md)");
    app_->add_option("--clock", options_.clock,
                     "the clock of time_ns in JSON: wall (since the epoch, the default), mono "
                     "(CLOCK_MONOTONIC, ftrace's mono trace_clock) or boot (CLOCK_BOOTTIME)")
        ->transform(CLI::Validator(
            [](std::string& value) {
                const std::map<std::string, Clock> clocks{
                    {"wall", Clock::wall}, {"mono", Clock::mono}, {"boot", Clock::boot}};
                const auto clock = clocks.find(value);
                if (clock == clocks.end())
                    return fmt::format("'{}' is not wall, mono or boot", value);
                value = std::to_string(static_cast<int>(clock->second));
                return std::string();
            },
            ""))
        ->option_text("CLOCK");
    app_->add_flag(common_names('v', "verbose"), options_.verbose, "show libbpf's log");
    app_->add_option("--ready-fd", options_.ready_fd,
                     "once tracing has begun (every event attached), write \"ready\" and a newline "
                     "to file descriptor FD and close it, for scripts that start events after")
        ->check(writable_descriptor)
        ->type_name("FD");
}

void Cli::add_interval_count()
{
    app_->add_option("interval", options_.interval, "print every INTERVAL seconds")
        ->check(positive_number);
    app_->add_option("count", options_.count, "stop after COUNT intervals")
        ->check(positive_integer);
}

void Cli::add_interval_option()
{
    app_->add_option(common_names('i', "interval"), options_.interval, "print every INTERVAL seconds")
        ->check(positive_number);
}

void Cli::add_streaming()
{
    app_->add_flag("--perf-buffer", options_.perf_buffer,
                   "use a perf buffer instead of the BPF ring buffer");
}

void Cli::add_time_of_day()
{
    app_->add_flag_callback("-T,--time", [] {},
                            "TIME as the time of day, HH:MM:SS, as it is without --timestamp")
        ->excludes(app_->get_option("--timestamp"));
}

void Cli::add_map_memory()
{
    app_->add_option("--max-map-memory", options_.max_map_memory_mib,
                     "refuse to start when the maps would take more than MIB of kernel memory "
                     "(default: 1024 or half the available memory)")
        ->check(CLI::Range(std::uint64_t(1), std::uint64_t(1) << 30))
        ->option_text("MIB");
}

void Cli::release_short_duration()
{
    if (duration_ && app_->remove_option(duration_))
        duration_ = app_->add_option("--duration", options_.duration, "stop after SECONDS")
                        ->check(positive_number);
}

void Cli::add_disk(std::string& disk)
{
    release_short_duration();
    CliOption(app_->add_option("-d,--disk", disk,
                               "only I/O to this disk or partition (sda, loop3, nvme0n1p2)"),
              completions_)
        .complete("@disk");
}

std::optional<Exit> Cli::parse(int argc, char** argv)
{
    try {
        refuse_empty_values(*app_, std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
        app_->parse(argc, argv);
        refuse_unusable_numbers(*app_);
    } catch (const CLI::CallForHelp&) {
        // A stdout that cannot be written (a full disk) fails when fmt writes or when flushed.
        std::string failed;
        try {
            fmt::print("{}", app_->help());
            if (std::fflush(stdout) != 0)
                failed = std::strerror(errno);
        } catch (const std::system_error& e) {
            failed = e.code().message();
        }
        if (failed.empty())
            return Exit::ok;
        fmt::print(stderr, "{}: cannot write to stdout: {}\n", name_, failed);
        return Exit::failure;
    } catch (const DocsRequest& request) {
        fmt::print("{}", request.what == DocsRequest::man_page ? man_page_generated(*app_)
                                                                 : completion_options(*app_, completions_));
        return Exit::ok;
    } catch (const CLI::CallForVersion& version) {
        fmt::print("{}", version.what());
        return Exit::ok;
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "{}: {} (see --help)\n", name_, one_line(parse_error_text(*app_, e)));
        return Exit::usage;
    }
    set_libbpf_verbose(options_.verbose);
    if (options_.max_map_memory_mib)
        set_map_memory_limit(options_.max_map_memory_mib << 20);
    return std::nullopt;
}

void Cli::parse_args(const std::vector<std::string>& args)
{
    std::vector<std::string> reversed(args.rbegin(), args.rend()); // CLI11 takes them so
    // What the command line answers and exits on (--help, --version, the build's --man-page)
    // has no meaning in a list of options.
    auto answers = [&](std::string_view what) {
        return Error(Exit::usage, fmt::format("{} answers and exits: no option of a configuration", what));
    };
    try {
        refuse_empty_values(*app_, args);
        app_->parse(reversed);
        refuse_unusable_numbers(*app_);
    } catch (const DocsRequest&) {
        throw answers("a documentation request");
    } catch (const CLI::CallForHelp&) {
        throw answers("--help");
    } catch (const CLI::CallForAllHelp&) {
        throw answers("--help");
    } catch (const CLI::CallForVersion&) {
        throw answers("--version");
    } catch (const CLI::ParseError& e) {
        throw Error(Exit::usage, parse_error_text(*app_, e));
    }
}

void copy_comm(std::string_view comm, volatile char (&dst)[16])
{
    if (comm.size() > 15)
        throw Error(Exit::usage, fmt::format("--comm '{}' is longer than 15 characters", comm));
    for (std::size_t i = 0; i < 16; i++)
        dst[i] = i < comm.size() ? comm[i] : '\0';
}

} // namespace tpkit
