// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/run/tool.hpp"

#include "tpkit/bpf/program_stats.hpp"
#include "tpkit/bpf/skeleton.hpp"
#include "tpkit/bpf/transport.hpp"
#include "tpkit/output/metrics.hpp"
#include "tpkit/process/stop.hpp"

#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace tpkit {
namespace {

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
} // namespace

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

} // namespace tpkit
