// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Everything a tool prints on stdout goes through one Output. Text is appended to a buffer and
// written only as far as stdout takes it without blocking, so a reader that stops reading
// (`tool | less`, a pipe nobody reads) never holds the tool: a signal still stops it, and what
// could not be written is counted, never lost in silence.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

namespace tpkit {

// Thrown when stdout's reader went away (EPIPE); run_tool() ends the tool quietly with 0.
struct StdoutClosed {};

class Output {
public:
    explicit Output(int fd);
    ~Output();
    Output(const Output&) = delete;
    Output& operator=(const Output&) = delete;

    // Appends text; nothing is written before write_available() or finish().
    template <class... Args>
    void print(fmt::format_string<Args...> format, Args&&... args)
    {
        fmt::format_to(std::back_inserter(pending_), format, std::forward<Args>(args)...);
    }
    void append(std::string_view text) { pending_.append(text); }
    // The buffer itself, for writers that format in place.
    std::string& buffer() { return pending_; }

    // Writes what the fd takes now without blocking. Past max_backlog bytes waiting, the newest
    // whole lines are dropped and counted. EPIPE → StdoutClosed; other errors → Error(failure).
    void write_available();

    // More than a batch is waiting: streaming tools stop taking events until it drains, so that
    // events wait in (or are dropped and counted by) the kernel's buffer instead of here.
    bool backlogged() const { return pending_.size() - written_ >= high_water; }

    // The fd to poll for POLLOUT while text waits for it, else -1 (StopSignal::wait does).
    int poll_fd() const;

    // At exit: writes the rest, waiting while the reader keeps taking it. Gives up after a
    // second without progress, or at once on a (further) stop signal; what is left is counted.
    void finish();

    // At the end of a tool's output, before its programs detach: finish(), then the reader's
    // end of stdout is closed (fd 1 then points at /dev/null), so that a reader (`| jq`, a
    // script) has all of it and EOF at once rather than after the detach, which can take long.
    void end();

    // The reader is gone before anything was written (stdout was closed): the next write ends
    // the tool as EPIPE does.
    void reader_gone() { reader_gone_ = true; }

    // Lines dropped or left unwritten so far.
    std::uint64_t lines_not_written() const { return lines_not_written_; }

    static constexpr std::size_t high_water = 1 << 20;
    static constexpr std::size_t max_backlog = 8 << 20;

private:
    // Writes from pending_; false when the fd would block.
    bool write_once();
    void drop(std::size_t from);
    void close_reopened_pipe();

    int fd_;
    int write_fd_; // fd_, or its pipe opened anew, non-blocking (see the constructor)
    bool never_blocks_ = false; // regular files and non-tty character devices (/dev/null)
    std::string pending_;
    std::size_t written_ = 0; // bytes at the front of pending_ already written
    std::uint64_t lines_not_written_ = 0;
    bool reader_gone_ = false;
};

// The tools' stdout.
Output& standard_output();

// Opens /dev/null on any of descriptors 0, 1 and 2 the process was started without, so that
// no file or BPF object the tool opens takes their numbers (output would be written into it).
// A closed stdout is a reader gone: the tool ends quietly at its first output, as with EPIPE.
void claim_standard_fds();

} // namespace tpkit
