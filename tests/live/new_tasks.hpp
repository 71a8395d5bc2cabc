// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A child of a known PID that, once let go, creates a known set of tasks and says which: threads
// made by its main thread, one more thread (the spawner) and threads made by the spawner, then
// processes, each exiting at once. For the tools that see tasks created (threadsnoop, pidpersec).
#pragma once

#include "scripted_child.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpkit::live {

struct NewTasks {
    struct Thread {
        pid_t creator = -1; // the thread that created it
        pid_t tid = -1;
    };
    std::vector<Thread> threads;
    std::vector<pid_t> processes;
};

class NewTaskChild {
public:
    // How many threads the main thread makes (the spawner is one more), the spawner makes, and
    // processes the main thread forks.
    NewTaskChild(const std::string& comm, int from_main, int from_spawner, int processes)
        : pipe_(make_pipe()),
          child_(comm, nullptr, [this, from_main, from_spawner, processes] {
              return act(from_main, from_spawner, processes);
          })
    {
        close(pipe_.write_end);
        pipe_.write_end = -1;
    }
    ~NewTaskChild()
    {
        if (pipe_.read_end >= 0)
            close(pipe_.read_end);
    }
    NewTaskChild(const NewTaskChild&) = delete;
    NewTaskChild& operator=(const NewTaskChild&) = delete;

    pid_t pid() const { return child_.pid(); }

    // Lets it create its tasks and exit; what it created (throws when a step failed).
    NewTasks go_and_wait()
    {
        const int status = child_.go_and_wait();
        NewTasks made;
        Record r{};
        while (read(pipe_.read_end, &r, sizeof(r)) == sizeof(r)) {
            if (r.kind == 'p')
                made.processes.push_back(r.id);
            else
                made.threads.push_back({r.creator, r.id});
        }
        if (status != 0)
            throw std::runtime_error("the task-making child failed: step " + std::to_string(status));
        return made;
    }

private:
    struct Record {
        char kind; // 't' a thread, 'p' a process
        pid_t creator;
        pid_t id;
    };
    struct Ends {
        int read_end = -1, write_end = -1;
    };
    static Ends make_pipe()
    {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        return {fds[0], fds[1]};
    }

    // Below PIPE_BUF: each record is written whole, whichever thread writes it.
    static bool report(int fd, char kind, pid_t creator, pid_t id)
    {
        const Record r{kind, creator, id};
        return write(fd, &r, sizeof(r)) == sizeof(r);
    }

    struct Start {
        int fd;
        pid_t creator;
        int makes; // threads this one creates in turn
    };

    static pid_t own_tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

    static void* thread_body(void* arg)
    {
        const Start* start = static_cast<const Start*>(arg);
        const pid_t me = own_tid();
        if (!report(start->fd, 't', start->creator, me))
            return reinterpret_cast<void*>(1);
        return reinterpret_cast<void*>(std::intptr_t(make_threads(start->fd, me, start->makes)));
    }

    // Creates `count` threads one after the other, each joined: 0, else the step that failed.
    static int make_threads(int fd, pid_t creator, int count)
    {
        Start start{fd, creator, 0};
        for (int i = 0; i < count; i++) {
            pthread_t t;
            void* result = nullptr;
            if (pthread_create(&t, nullptr, thread_body, &start) != 0)
                return 2;
            if (pthread_join(t, &result) != 0 || result != nullptr)
                return 3;
        }
        return 0;
    }

    int act(int from_main, int from_spawner, int processes) const
    {
        const int fd = pipe_.write_end;
        const pid_t me = own_tid();
        if (int failed = make_threads(fd, me, from_main))
            return failed;
        Start spawner{fd, me, from_spawner};
        pthread_t t;
        void* result = nullptr;
        if (pthread_create(&t, nullptr, thread_body, &spawner) != 0)
            return 4;
        if (pthread_join(t, &result) != 0 || result != nullptr)
            return 5;
        for (int i = 0; i < processes; i++) {
            const pid_t child = fork();
            if (child == 0)
                _exit(0);
            if (child < 0 || !report(fd, 'p', me, child))
                return 6;
            int status = 0;
            if (waitpid(child, &status, 0) != child || status != 0)
                return 7;
        }
        return 0;
    }

    Ends pipe_;
    ScriptedChild child_;
};

} // namespace tpkit::live
