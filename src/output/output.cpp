// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/output/output.hpp"

#include "tpkit/cli/cli.hpp"
#include "tpkit/process/stop.hpp"
#include "tpkit/support/error.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tpkit {
namespace {

// POLLOUT on a pipe means one free slot: a write of at most PIPE_BUF bytes then fits without
// blocking. Terminals and sockets take at least as much when they say they are writable.
constexpr std::size_t chunk_bytes = PIPE_BUF;

} // namespace

Output::Output(int fd) : fd_(fd), write_fd_(fd)
{
    struct stat st{};
    if (fstat(fd, &st) != 0)
        return;
    never_blocks_ = S_ISREG(st.st_mode) || (S_ISCHR(st.st_mode) && !isatty(fd));
    // A pipe (or FIFO) is opened anew through /proc, non-blocking: a description of our own, so
    // that O_NONBLOCK changes nothing for whoever else shares fd's, and one write() then takes
    // all that fits, where the blocking fd needs a poll() and a write() per PIPE_BUF (~75,000 of
    // each for tpsnoop's 2M-event burst). Without /proc, the blocking fd.
    if (S_ISFIFO(st.st_mode)) {
        const int pipe = open(fmt::format("/proc/self/fd/{}", fd).c_str(),
                              O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (pipe >= 0)
            write_fd_ = pipe;
    }
}

Output::~Output() { close_reopened_pipe(); }

void Output::close_reopened_pipe()
{
    if (write_fd_ != fd_) {
        close(write_fd_);
        write_fd_ = fd_;
    }
}

Output& standard_output()
{
    static Output out(STDOUT_FILENO);
    return out;
}

void claim_standard_fds()
{
    for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        int null = open("/dev/null", O_RDWR); // the lowest free number: fd
        if (null >= 0 && null != fd) {
            dup2(null, fd);
            close(null);
        }
        if (fd == STDOUT_FILENO)
            standard_output().reader_gone();
    }
}

bool Output::write_once()
{
    if (reader_gone_)
        throw StdoutClosed{};
    std::size_t size = pending_.size() - written_;
    if (!never_blocks_ && write_fd_ == fd_) {
        pollfd pfd{fd_, POLLOUT, 0};
        if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLOUT | POLLERR | POLLHUP)))
            return false;
        size = std::min(size, chunk_bytes);
    }
    ssize_t n = ::write(write_fd_, pending_.data() + written_, size);
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return false;
        if (errno == EPIPE)
            throw StdoutClosed{};
        throw Error(Exit::failure, std::string("cannot write to stdout: ") + std::strerror(errno));
    }
    written_ += static_cast<std::size_t>(n);
    // Written bytes are cut off in large steps, not moved out at every small write.
    if (written_ == pending_.size() || written_ >= chunk_bytes * 64) {
        pending_.erase(0, written_);
        written_ = 0;
    }
    return true;
}

void Output::drop(std::size_t from)
{
    lines_not_written_ += static_cast<std::uint64_t>(
        std::count(pending_.begin() + static_cast<std::ptrdiff_t>(from), pending_.end(), '\n'));
    pending_.resize(from);
    if (pending_.size() == written_) {
        pending_.clear();
        written_ = 0;
    }
}

void Output::write_available()
{
    while (pending_.size() > written_ && write_once()) {
    }
    if (pending_.size() - written_ > max_backlog) {
        // Whole lines only: what stays ends at a line's end.
        std::size_t keep = pending_.rfind('\n', written_ + max_backlog - 1);
        drop(keep == std::string::npos || keep < written_ ? written_ : keep + 1);
    }
}

int Output::poll_fd() const { return pending_.size() > written_ && !never_blocks_ ? write_fd_ : -1; }

void Output::finish()
{
    using clock = std::chrono::steady_clock;
    auto last_progress = clock::now();
    while (pending_.size() > written_) {
        std::size_t before = pending_.size() - written_;
        write_available();
        if (pending_.size() - written_ < before) {
            last_progress = clock::now();
            continue;
        }
        auto idle = clock::now() - last_progress;
        if (idle >= std::chrono::seconds(1))
            break;
        pollfd fds[2] = {{write_fd_, POLLOUT, 0}, {stop_signal_fd(), POLLIN, 0}};
        poll(fds, 2, 100);
        if (fds[1].revents & POLLIN)
            break; // a further Ctrl-C: stop waiting for the reader
    }
    drop(written_);
}

void Output::end()
{
    finish();
    close_reopened_pipe();
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, fd_);
        close(null);
    }
}

} // namespace tpkit
