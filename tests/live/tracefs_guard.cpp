// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpkit never changes tracefs state: it attaches BPF programs through perf events and raw
// tracepoints, and writes nothing there. Every live test is checked for it: the state is read
// before and after each test, and a test that changed it fails, naming what changed.
//
// Read: tracing_on, current_tracer, events/enable, set_event (the enabled events: it stands
// for every events/*/*/enable), every events/*/*/filter, kprobe_events, uprobe_events and the
// instances/ list: thousands of filter files, twice a test (its cost: bench/BENCHMARKS.md,
// "Figures the comments point to"). The tests' own trace
// instances (trace_instance.hpp: tpkit-NAME-PID) of other processes are left out: runs beside
// this one may add and remove theirs at any moment.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

// The file's text without its last newline, or nothing when it does not exist (kprobe_events
// without CONFIG_KPROBE_EVENTS).
std::optional<std::string> read_text(const std::string& path)
{
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
        text.append(buf, n);
    close(fd);
    if (text.ends_with('\n'))
        text.pop_back();
    return text;
}

std::vector<std::string> subdirectories(const std::string& path)
{
    std::vector<std::string> names;
    if (DIR* dir = opendir(path.c_str())) {
        while (const dirent* entry = readdir(dir))
            if (entry->d_type == DT_DIR && entry->d_name[0] != '.')
                names.emplace_back(entry->d_name);
        closedir(dir);
    }
    return names;
}

// A test instance of another process: "tpkit-" NAME "-" PID with PID not ours.
bool others_test_instance(const std::string& name)
{
    const auto dash = name.rfind('-');
    if (!name.starts_with("tpkit-") || dash == std::string::npos || dash + 1 == name.size())
        return false;
    const std::string pid = name.substr(dash + 1);
    return pid.find_first_not_of("0123456789") == std::string::npos && pid != std::to_string(getpid());
}

class TracefsGuard : public testing::EmptyTestEventListener {
public:
    TracefsGuard()
    {
        // Not in the 6.1 VM (tests/kernels: TPKIT_TEST_SLOWDOWN), whose emulated CPUs would
        // make its reads cost many times more: what tpkit writes does not depend on the kernel.
        const char* slowdown = std::getenv("TPKIT_TEST_SLOWDOWN");
        if (slowdown && std::strtol(slowdown, nullptr, 10) > 1)
            return;
        for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
            if (access((std::string(root) + "/events/enable").c_str(), R_OK) == 0) {
                root_ = root;
                break;
            }
    }

private:
    using State = std::map<std::string, std::string>; // path below the root → text

    void OnTestStart(const testing::TestInfo&) override { before_ = snapshot(); }

    // Runs before the result printer's OnTestEnd, while the test is still the current one: a
    // failure added here is the test's.
    void OnTestEnd(const testing::TestInfo&) override
    {
        const State after = snapshot();
        for (const auto& [path, text] : before_) {
            auto it = after.find(path);
            if (it == after.end())
                ADD_FAILURE() << "tracefs changed: " << path << " is gone (was '" << text << "')";
            else if (it->second != text)
                ADD_FAILURE() << "tracefs changed: " << path << " was '" << text << "', is '"
                              << it->second << "'";
        }
        for (const auto& [path, text] : after)
            if (!before_.contains(path))
                ADD_FAILURE() << "tracefs changed: " << path << " appeared ('" << text << "')";
    }

    State snapshot()
    {
        State state;
        if (root_.empty())
            return state;
        for (const char* file : {"tracing_on", "current_tracer", "events/enable", "set_event",
                                 "kprobe_events", "uprobe_events"})
            if (auto text = read_text(root_ + "/" + file))
                state[file] = *text;
        for (const auto& name : subdirectories(root_ + "/instances"))
            if (!others_test_instance(name))
                state["instances/" + name] = "";
        // Listed once: tpkit adds no event, and a kprobe event added shows in kprobe_events.
        if (filters_.empty())
            for (const auto& system : subdirectories(root_ + "/events"))
                for (const auto& event : subdirectories(root_ + "/events/" + system))
                    filters_.push_back("events/" + system + "/" + event + "/filter");
        for (const auto& filter : filters_) {
            auto text = read_text(root_ + "/" + filter);
            if (text && *text != "none") // the default, left out: the state stays small
                state[filter] = *text;
        }
        return state;
    }

    std::string root_;
    std::vector<std::string> filters_;
    State before_;
};

const bool registered = [] {
    testing::UnitTest::GetInstance()->listeners().Append(new TracefsGuard);
    return true;
}();

} // namespace
