// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A child process that makes known kernel events from a known PID once the tool under test
// watches: it names itself, runs `prepare` (unshare, drop privileges, pin to a CPU, ...), says it
// is ready, waits (blocked in read(2)) for go(), runs `act` and exits with act's result. Or, made
// with Acts::on_request, it runs `act` at every act_once() and stays alive in between and after,
// blocked in read(2), until destroyed: for tools that read a process (its mappings) when they
// print, after the events.
#pragma once

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <functional>
#include <stdexcept>
#include <string>

namespace tpkit::live {

class ScriptedChild {
public:
    enum class Acts { once, on_request };

    // prepare and act return 0 when every step went as expected, else which step failed; they
    // run in a forked copy of a threaded process: raw system calls only, no allocation.
    ScriptedChild(const std::string& comm, const std::function<int()>& prepare,
                  const std::function<int()>& act, Acts acts = Acts::once)
    {
        int ready[2], go[2];
        if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        pid_ = fork();
        if (pid_ < 0)
            throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            close(ready[0]);
            close(go[1]);
            prctl(PR_SET_NAME, comm.c_str(), 0, 0, 0);
            char status = static_cast<char>(prepare ? prepare() : 0);
            if (write(ready[1], &status, 1) != 1 || status != 0)
                _exit(status ? status : 100);
            char byte;
            if (acts == Acts::on_request) {
                // Each act's result goes back on the ready pipe; the parent closing go ends it.
                while (read(go[0], &byte, 1) == 1) {
                    char result = static_cast<char>(act());
                    if (write(ready[1], &result, 1) != 1)
                        _exit(102);
                }
                _exit(0);
            }
            if (read(go[0], &byte, 1) != 1)
                _exit(101);
            _exit(act());
        }
        close(ready[1]);
        close(go[0]);
        go_fd_ = go[1];
        char status = 1;
        bool told = read(ready[0], &status, 1) == 1;
        if (acts == Acts::on_request)
            results_fd_ = ready[0];
        else
            close(ready[0]);
        if (!told || status != 0) {
            if (results_fd_ >= 0)
                close(results_fd_);
            waitpid(pid_, nullptr, 0);
            reaped_ = true;
            close(go_fd_);
            throw std::runtime_error(comm + " failed to prepare: step " + std::to_string(status));
        }
    }

    ~ScriptedChild()
    {
        if (go_fd_ >= 0)
            close(go_fd_);
        if (results_fd_ >= 0)
            close(results_fd_);
        if (!reaped_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }

    ScriptedChild(const ScriptedChild&) = delete;
    ScriptedChild& operator=(const ScriptedChild&) = delete;

    pid_t pid() const { return pid_; }

    // Lets it act.
    void go()
    {
        char byte = 1;
        if (write(go_fd_, &byte, 1) != 1)
            throw std::runtime_error("child gone");
        close(go_fd_);
        go_fd_ = -1;
    }

    // Acts::on_request: runs act once more and gives its result (-1: the child is gone).
    int act_once()
    {
        char byte = 1;
        if (write(go_fd_, &byte, 1) != 1 || read(results_fd_, &byte, 1) != 1)
            return -1;
        return byte;
    }

    // Lets it act, waits for it to exit; act's result (or 128 + signal).
    int go_and_wait()
    {
        go();
        return wait();
    }

    // Waits for it to exit once go() let it act; act's result (or 128 + signal).
    int wait()
    {
        int status = 0;
        waitpid(pid_, &status, 0);
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

private:
    pid_t pid_ = -1;
    int go_fd_ = -1;
    int results_fd_ = -1; // Acts::on_request
    bool reaped_ = false;
};

} // namespace tpkit::live
