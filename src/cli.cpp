// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/cli.hpp"

#include "cli_docs.hpp"
#include "tpkit/maps.hpp"
#include "tpkit/metrics.hpp"
#include "tpkit/program_stats.hpp"
#include "tpkit/skeleton.hpp"
#include "tpkit/transport.hpp"
#include "tpkit/version.hpp"

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

std::int64_t clock_ns(clockid_t clock)
{
    timespec ts{};
    clock_gettime(clock, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::vector<std::string>& traced_events()
{
    static std::vector<std::string> events;
    return events;
}

// "Tracing a, b, c and 5 more for 10 s… Ctrl-C to end."
void say_tracing(double duration_seconds)
{
    const auto& events = traced_events();
    constexpr std::size_t named = 3;
    std::string what;
    for (std::size_t i = 0; i < std::min(events.size(), named); i++)
        what += (i == 0 ? " " : ", ") + events[i];
    if (events.size() > named)
        what += fmt::format(" and {} more", events.size() - named);
    std::string until = duration_seconds > 0 ? fmt::format(" for {} s", duration_seconds) : "";
    fmt::print(stderr, "Tracing{}{}… Ctrl-C to end.\n", what, until);
}

// Set by reload_signal_fd(): SIGHUP then means "reload", not "stop".
bool sighup_reloads = false;

sigset_t stop_signals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (!sighup_reloads)
        sigaddset(&set, SIGHUP); // the terminal gone: stop as asked, never die mid-detach
    return set;
}

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

std::string format_hms(time_t seconds)
{
    tm local{};
    localtime_r(&seconds, &local);
    char text[16];
    std::strftime(text, sizeof(text), "%H:%M:%S", &local);
    return text;
}

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

int run_tool(std::string_view name, const std::function<void()>& body)
{
    // A closed stdout shows up as EPIPE from a write, not as a silent death by signal.
    signal(SIGPIPE, SIG_IGN);
    // From the start, so that a signal during load still ends in detach + final output.
    stop_signal_fd();
    Output& out = standard_output();
    // The error of a stdout that cannot be written (a full disk), if that is how it ended.
    auto finish_output = [&]() -> std::optional<Error> {
        try {
            out.finish();
        } catch (const StdoutClosed&) {
            return std::nullopt;
        } catch (const Error& e) {
            return e;
        }
        if (std::uint64_t lines = out.lines_not_written())
            fmt::print(stderr, "{}: {} lines of output not written: stdout was not being read\n",
                       name, lines);
        return std::nullopt;
    };
    try {
        body();
        if (auto failed = finish_output()) {
            fmt::print(stderr, "{}: {}\n", name, one_line(failed->what()));
            return static_cast<int>(failed->code());
        }
        return 0;
    } catch (const StdoutClosed&) {
        return 0;
    } catch (const Error& e) {
        finish_output();
        fmt::print(stderr, "{}: {}\n", name, one_line(e.what()));
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        finish_output();
        fmt::print(stderr, "{}: {}\n", name, one_line(e.what()));
        return static_cast<int>(Exit::failure);
    }
}

void copy_comm(std::string_view comm, volatile char (&dst)[16])
{
    if (comm.size() > 15)
        throw Error(Exit::usage, fmt::format("--comm '{}' is longer than 15 characters", comm));
    for (std::size_t i = 0; i < 16; i++)
        dst[i] = i < comm.size() ? comm[i] : '\0';
}

int stop_signal_fd()
{
    static const int fd = [] {
        sigset_t set = stop_signals();
        sigprocmask(SIG_BLOCK, &set, nullptr);
        int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
            throw Error(Exit::failure, std::string("signalfd: ") + std::strerror(errno));
        return sfd;
    }();
    return fd;
}

bool stop_pending()
{
    sigset_t pending, stops = stop_signals();
    sigpending(&pending);
    for (int sig : {SIGINT, SIGTERM, SIGHUP})
        if (sigismember(&stops, sig) == 1 && sigismember(&pending, sig) == 1)
            return true;
    return false;
}

int reload_signal_fd()
{
    sighup_reloads = true;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0)
        throw Error(Exit::failure, std::string("signalfd: ") + std::strerror(errno));
    return fd;
}

void note_traced(std::string_view event)
{
    auto& events = traced_events();
    if (std::find(events.begin(), events.end(), event) == events.end())
        events.emplace_back(event);
}

StopSignal::StopSignal(double duration_seconds)
{
    stop_signal_fd();
    if (isatty(STDERR_FILENO))
        say_tracing(duration_seconds);
    if (duration_seconds > 0)
        deadline_ = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(duration_seconds));
}

StopSignal::StopSignal(const CommonOptions& options) : StopSignal(options.duration)
{
    if (options.ready_fd < 0)
        return;
    // A reader that has gone is no reason to stop tracing (SIGPIPE is ignored: run_tool()).
    constexpr std::string_view ready = "ready\n";
    while (write(options.ready_fd, ready.data(), ready.size()) < 0 && errno == EINTR) {
    }
    close(options.ready_fd);
}

bool StopSignal::wait(std::chrono::milliseconds timeout)
{
    if (stopped_)
        return true;
    using clock = std::chrono::steady_clock;
    const auto until = deadline_ ? std::min(*deadline_, clock::now() + timeout) : clock::now() + timeout;
    Output& out = standard_output();
    out.write_available();
    for (;;) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock::now());
        pollfd fds[2] = {{stop_signal_fd(), POLLIN, 0}, {out.poll_fd(), POLLOUT, 0}};
        poll(fds, 2, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
        if (fds[0].revents & POLLIN) {
            signalfd_siginfo info{};
            while (read(fds[0].fd, &info, sizeof(info)) == sizeof(info)) {
            }
            return stopped_ = true;
        }
        if (fds[1].revents)
            out.write_available();
        if (clock::now() >= until)
            break;
    }
    return stopped_ = deadline_ && clock::now() >= *deadline_;
}

namespace {

// The loop of run_intervals(), until its last print.
void print_intervals(const CommonOptions& options, StopSignal& stop,
                     const std::function<void(Drain)>& print)
{
    Output& out = standard_output();
    SkippedRuns skipped(options.tool);
    auto print_once = [&](Drain drain) {
        if (options.timestamp && !options.json)
            out.print("{}\n", format_hms(std::time(nullptr)));
        print(drain);
        if (const std::uint64_t n = skipped.report(); n && options.json)
            out.print("{}\n", lost_json({.recursion = n}, now_ns(options.clock)));
        out.write_available();
    };
    if (options.interval <= 0) {
        while (!stop.wait(std::chrono::hours(1))) {
        }
        print_once(Drain::last);
        return;
    }
    const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::duration<double>(options.interval));
    for (std::uint64_t printed = 0; options.count == 0 || printed < options.count; printed++) {
        auto next = std::chrono::steady_clock::now() + interval;
        bool stopping = false;
        while (!stopping) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(next - std::chrono::steady_clock::now());
            if (left <= std::chrono::milliseconds(0))
                break;
            stopping = stop.wait(left);
        }
        const bool last = stopping || printed + 1 == options.count;
        print_once(last ? Drain::last : Drain::interval);
        if (stopping)
            return;
    }
}

} // namespace

void run_intervals(const CommonOptions& options, StopSignal& stop,
                   const std::function<void(Drain)>& print)
{
    print_intervals(options, stop, print);
    standard_output().end();
}

void run_aggregate(const CommonOptions& options, StopSignal& stop,
                   const std::function<Reading(Drain)>& collect)
{
    run_intervals(options, stop, [&](Drain drain) {
        const std::int64_t end_ns = now_ns(options.clock); // the interval's end: when drained
        Reading reading = collect(drain);
        if (options.json)
            render_json(reading, standard_output(), end_ns);
        else
            render_text(reading, standard_output());
    });
}

void run_stream(EventReader& reader, StopSignal& stop)
{
    constexpr std::chrono::milliseconds batch(10);
    Output& out = standard_output();
    while (!stop.stop_requested()) {
        if (out.backlogged()) {
            stop.wait(batch);
            continue;
        }
        reader.poll(batch);
        out.write_available();
    }
    // What the buffer still holds is read whatever the backlog: the output keeps what it may
    // and counts the rest as lines not written, so that no event goes unaccounted for.
    reader.poll(std::chrono::milliseconds(0));
    out.write_available();
}

void report_lost(std::string_view tool, std::uint64_t buffer_full, bool json)
{
    const LostEvents lost{.buffer_full = buffer_full, .recursion = process_recursion_misses()};
    Output& out = standard_output();
    if (json)
        out.print("{}\n", lost_json(lost));
    out.end();
    if (lost.buffer_full)
        fmt::print(stderr, "{}: {} events lost (the reader fell behind)\n", tool, lost.buffer_full);
    if (lost.recursion)
        fmt::print(stderr, "{}\n", skipped_runs_message(tool, lost.recursion));
}

std::string_view clock_name(Clock clock)
{
    switch (clock) {
    case Clock::mono:
        return "mono";
    case Clock::boot:
        return "boot";
    case Clock::wall:
        break;
    }
    return "wall";
}

MonotonicClock::MonotonicClock()
    : offset_ns_(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC)),
      boot_offset_ns_(clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC)),
      start_ns_(static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC)))
{
}

std::int64_t MonotonicClock::time_ns(std::uint64_t monotonic_ns, Clock clock) const
{
    switch (clock) {
    case Clock::mono:
        return static_cast<std::int64_t>(monotonic_ns);
    case Clock::boot:
        return static_cast<std::int64_t>(monotonic_ns) + boot_offset_ns_;
    case Clock::wall:
        break;
    }
    return realtime_ns(monotonic_ns);
}

std::int64_t now_ns(Clock clock)
{
    switch (clock) {
    case Clock::mono:
        return clock_ns(CLOCK_MONOTONIC);
    case Clock::boot:
        return clock_ns(CLOCK_BOOTTIME);
    case Clock::wall:
        break;
    }
    return clock_ns(CLOCK_REALTIME);
}

std::int64_t MonotonicClock::realtime_ns(std::uint64_t monotonic_ns) const
{
    return static_cast<std::int64_t>(monotonic_ns) + offset_ns_;
}

std::string MonotonicClock::wall_time(std::uint64_t monotonic_ns) const
{
    return format_hms(static_cast<time_t>(realtime_ns(monotonic_ns) / 1'000'000'000));
}

double MonotonicClock::seconds_since_start(std::uint64_t monotonic_ns) const
{
    return (static_cast<double>(monotonic_ns) - static_cast<double>(start_ns_)) / 1e9;
}

} // namespace tpkit
