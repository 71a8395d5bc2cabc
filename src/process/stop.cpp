// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/process/stop.hpp"

#include "tpkit/support/error.hpp"

#include <signal.h>
#include <sys/signalfd.h>

#include <cerrno>
#include <cstring>

namespace tpkit {
namespace {

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

} // namespace

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

} // namespace tpkit
