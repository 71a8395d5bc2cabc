#include "tpkit/cli.hpp"

#include "tpkit/skeleton.hpp"

#include <fmt/core.h>
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tpkit {
namespace {

std::int64_t clock_ns(clockid_t clock)
{
    timespec ts{};
    clock_gettime(clock, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string format_hms(time_t seconds)
{
    tm local{};
    localtime_r(&seconds, &local);
    char text[16];
    std::strftime(text, sizeof(text), "%H:%M:%S", &local);
    return text;
}

sigset_t stop_signals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

// CLI11's own range messages print DBL_MAX in full; ours name the value and what is wanted.
const CLI::Validator positive_number(
    [](const std::string& text) {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(v > 0) || v > 1e9)
            return fmt::format("'{}' is not a positive number", text);
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

} // namespace

Cli::Cli(std::string name, std::string description, std::string examples)
    : name_(std::move(name)), app_(std::move(description), name_)
{
    app_.footer("EXAMPLES:\n" + examples);
    app_.get_formatter()->column_width(30);
}

void Cli::add_common()
{
    app_.add_option("-p,--pid", options_.pid, "only the process with this PID (thread group)")
        ->check(positive_integer);
    app_.add_option("--comm", options_.comm, "only tasks whose command name is COMM")
        ->check([](const std::string& v) {
            return v.empty() || v.size() > 15 ? std::string("must have 1 to 15 characters")
                                              : std::string();
        });
    app_.add_flag("-T,--timestamp", options_.timestamp,
                  "timestamps: HH:MM:SS on interval output, seconds since start on events");
    app_.add_option("-d,--duration", options_.duration, "stop after SECONDS")
        ->check(positive_number);
    app_.add_flag("--json", options_.json, "one JSON object per line");
    app_.add_flag("-v,--verbose", options_.verbose, "show libbpf's log");
}

void Cli::add_interval_count()
{
    app_.add_option("interval", options_.interval, "print every INTERVAL seconds")
        ->check(positive_number);
    app_.add_option("count", options_.count, "stop after COUNT intervals")
        ->check(positive_integer);
}

void Cli::add_streaming()
{
    app_.add_flag("--perf-buffer", options_.perf_buffer,
                  "use a perf buffer instead of the BPF ring buffer");
}

std::optional<Exit> Cli::parse(int argc, char** argv)
{
    try {
        app_.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        fmt::print("{}", app_.help());
        return Exit::ok;
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "{}: {} (see --help)\n", name_, e.what());
        return Exit::usage;
    }
    set_libbpf_verbose(options_.verbose);
    return std::nullopt;
}

int run_tool(std::string_view name, const std::function<void()>& body)
{
    // A closed stdout shows up as EPIPE from flush_stdout(), not as a silent death by signal.
    signal(SIGPIPE, SIG_IGN);
    // From the start, so that a signal during load still ends in detach + final output.
    sigset_t set = stop_signals();
    sigprocmask(SIG_BLOCK, &set, nullptr);
    try {
        body();
        flush_stdout();
        return 0;
    } catch (const StdoutClosed&) {
        return 0;
    } catch (const Error& e) {
        std::fflush(stdout);
        fmt::print(stderr, "{}: {}\n", name, e.what());
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::fflush(stdout);
        fmt::print(stderr, "{}: {}\n", name, e.what());
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

StopSignal::StopSignal(double duration_seconds)
{
    sigset_t set = stop_signals();
    sigprocmask(SIG_BLOCK, &set, nullptr);
    if (duration_seconds > 0)
        deadline_ = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(duration_seconds));
}

bool StopSignal::wait(std::chrono::milliseconds timeout)
{
    if (stopped_)
        return true;
    auto now = std::chrono::steady_clock::now();
    if (deadline_) {
        if (now >= *deadline_)
            return stopped_ = true;
        timeout = std::min(timeout, std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - now));
    }
    sigset_t set = stop_signals();
    timespec ts{static_cast<time_t>(timeout.count() / 1000),
                static_cast<long>(timeout.count() % 1000) * 1'000'000};
    if (sigtimedwait(&set, nullptr, &ts) > 0)
        return stopped_ = true;
    return stopped_ = deadline_ && std::chrono::steady_clock::now() >= *deadline_;
}

void run_intervals(const CommonOptions& options, StopSignal& stop,
                   const std::function<void()>& print)
{
    auto print_once = [&] {
        if (options.timestamp && !options.json)
            fmt::print("{}\n", format_hms(std::time(nullptr)));
        print();
        flush_stdout();
    };
    if (options.interval <= 0) {
        while (!stop.wait(std::chrono::hours(1))) {
        }
        print_once();
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
        print_once();
        if (stopping)
            return;
    }
}

void flush_stdout()
{
    if (std::fflush(stdout) != 0 && errno == EPIPE)
        throw StdoutClosed{};
}

void report_lost(std::string_view tool, std::uint64_t lost, bool json)
{
    if (json)
        fmt::print("{{\"lost_events\":{}}}\n", lost);
    flush_stdout();
    if (lost)
        fmt::print(stderr, "{}: {} events lost (the reader fell behind)\n", tool, lost);
}

MonotonicClock::MonotonicClock()
    : offset_ns_(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC)),
      start_ns_(static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC)))
{
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
