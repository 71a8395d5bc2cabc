// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// sigsnoop and killsnoop against real signals: a sender of a known PID signals a target of a
// known PID that blocks one signal and ignores another, so that the kernel delivers, finds
// already pending and ignores known signals; with -k, its kill(), tkill() and tgkill() calls
// succeed or fail (ESRCH) with known results. Every event of that sender appears exactly once.
#include "live.hpp"
#include "tool_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

using Event = std::map<std::string, std::string>;

// A PID no process can have: above the kernel's PID_MAX_LIMIT (4194304).
constexpr pid_t no_such_pid = 4194305;

// The target: blocks SIGUSR1 (so a second one finds the first pending), ignores SIGUSR2, and
// waits to be killed. Returns once it is set up.
pid_t start_target()
{
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    pid_t pid = tpkit::live::start_child("tpk-sigtarget", [&] {
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        sigprocmask(SIG_BLOCK, &usr1, nullptr);
        signal(SIGUSR2, SIG_IGN);
        if (write(ready[1], "r", 1) != 1)
            _exit(90);
        for (;;)
            pause();
    });
    char c;
    bool up = read(ready[0], &c, 1) == 1;
    close(ready[0]);
    close(ready[1]);
    if (!up)
        throw std::runtime_error("the target did not start");
    return pid;
}

// Runs `sends` in a child named tpk-sender, reaps it and the target (which the sends kill), and
// returns the sender's PID.
pid_t send_from_child(pid_t target, const std::function<void()>& sends)
{
    pid_t sender = tpkit::live::start_child("tpk-sender", sends);
    EXPECT_EQ(tpkit::live::reap(sender), 0);
    int status = tpkit::live::reap(target);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    return sender;
}

// The signals the kernel generates for them: delivered, already pending, ignored, delivered.
void generate_signals(pid_t target)
{
    kill(target, SIGUSR1);
    kill(target, SIGUSR1);
    kill(target, SIGUSR2);
    kill(target, SIGKILL);
}

// The calls: kill, a kill of no one (ESRCH), a kill of signal 0 (nothing sent), tgkill, tkill,
// and the final kill.
void kill_calls(pid_t target)
{
    kill(target, SIGUSR1);
    kill(no_such_pid, SIGTERM);
    kill(target, 0);
    syscall(SYS_tgkill, target, target, SIGUSR2);
    syscall(SYS_tkill, target, SIGUSR2);
    kill(target, SIGKILL);
}

// NAME --json OPTIONS, showing what `poke` makes (pred matches it) before returning.
std::unique_ptr<ToolRun> start_tool(const std::string& name, std::vector<std::string> options,
                                    const std::function<void()>& poke,
                                    const std::function<bool(const Event&)>& pred)
{
    options.insert(options.begin(), {tpkit::live::tool_path(name), "--json"});
    auto tool = std::make_unique<ToolRun>(options);
    constexpr int pokes = 100; // 100 ms apart at most
    bool live = tpkit::live::poke_until_line(
        *tool, poke, [&](const std::string& l) { return pred(tpkit::live::parse_flat_json(l)); },
        pokes, 100ms);
    if (!live)
        ADD_FAILURE() << name << " never showed a marker signal; stderr: " << tool->stderr_text();
    return tool;
}

const std::string self = std::to_string(getpid());

// Signal mode: SIGWINCH to ourselves, which the kernel ignores (its default action).
std::unique_ptr<ToolRun> sigsnoop(std::vector<std::string> options)
{
    return start_tool(
        "sigsnoop", options, [] { kill(getpid(), SIGWINCH); },
        [](const Event& e) {
            return e.count("pid") && e.at("pid") == self && e.at("sig_name") == "SIGWINCH";
        });
}

// Call mode: a kill() of no one, which fails.
std::unique_ptr<ToolRun> kill_calls_tool(const std::string& name, std::vector<std::string> options)
{
    return start_tool(
        name, options, [] { kill(no_such_pid, SIGTERM); },
        [](const Event& e) {
            return e.count("pid") && e.at("pid") == self && e.at("tpid") == std::to_string(no_such_pid);
        });
}

// The sender's events (to `target` only when given: a sender's exit also signals its parent).
std::vector<Event> stop_and_take(ToolRun& tool, pid_t sender, pid_t target = 0)
{
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    std::vector<Event> events;
    for (const auto& line : tool.lines()) {
        Event e = tpkit::live::parse_flat_json(line);
        if (e.count("pid") && e.at("pid") == std::to_string(sender) &&
            (!target || e.at("tpid") == std::to_string(target)))
            events.push_back(e);
    }
    return events;
}

struct Expected {
    int sig;
    std::string sig_name;
    pid_t tpid;
    std::string tcomm;  // "null": none
    std::string result;
    std::string call;   // "null": none
};

void expect_events(const std::vector<Event>& events, pid_t sender,
                   const std::vector<Expected>& expected)
{
    ASSERT_EQ(events.size(), expected.size());
    for (std::size_t i = 0; i < events.size(); i++) {
        const Event& e = events[i];
        const Expected& x = expected[i];
        SCOPED_TRACE("event " + std::to_string(i) + " " + x.sig_name);
        EXPECT_EQ(e.at("pid"), std::to_string(sender));
        EXPECT_EQ(e.at("tid"), std::to_string(sender));
        EXPECT_EQ(e.at("comm"), "tpk-sender");
        EXPECT_EQ(e.at("sig"), std::to_string(x.sig));
        EXPECT_EQ(e.at("sig_name"), x.sig_name);
        EXPECT_EQ(e.at("tpid"), std::to_string(x.tpid));
        EXPECT_EQ(e.at("tcomm"), x.tcomm);
        EXPECT_EQ(e.at(x.call == "null" ? "result" : "ret"), x.result);
        EXPECT_EQ(e.at("call"), x.call);
    }
}

std::vector<Expected> generated(pid_t t)
{
    return {
        {SIGUSR1, "SIGUSR1", t, "tpk-sigtarget", "delivered", "null"},
        {SIGUSR1, "SIGUSR1", t, "tpk-sigtarget", "already_pending", "null"},
        {SIGUSR2, "SIGUSR2", t, "tpk-sigtarget", "ignored", "null"},
        {SIGKILL, "SIGKILL", t, "tpk-sigtarget", "delivered", "null"},
    };
}

std::vector<Expected> calls(pid_t t)
{
    return {
        {SIGUSR1, "SIGUSR1", t, "tpk-sigtarget", "0", "kill"},
        {SIGTERM, "SIGTERM", no_such_pid, "null", std::to_string(-ESRCH), "kill"},
        {0, "null", t, "null", "0", "kill"},
        {SIGUSR2, "SIGUSR2", t, "tpk-sigtarget", "0", "tgkill"},
        {SIGUSR2, "SIGUSR2", t, "tpk-sigtarget", "0", "tkill"},
        {SIGKILL, "SIGKILL", t, "tpk-sigtarget", "0", "kill"},
    };
}

// Those of `all` that `keep` keeps, in order.
std::vector<Expected> only(const std::vector<Expected>& all,
                           const std::function<bool(const Expected&)>& keep)
{
    std::vector<Expected> kept;
    std::copy_if(all.begin(), all.end(), std::back_inserter(kept), keep);
    return kept;
}

} // namespace

TEST(SigsnoopExact, DeliveredPendingAndIgnoredSignals)
{
    TPKIT_REQUIRE_LIVE();
    auto tool = sigsnoop({});
    pid_t target = start_target();
    pid_t sender = send_from_child(target, [&] { generate_signals(target); });
    expect_events(stop_and_take(*tool, sender, target), sender, generated(target));
}

TEST(SigsnoopExact, FailedOnlyAreTheUndelivered)
{
    TPKIT_REQUIRE_LIVE();
    auto tool = sigsnoop({"-x"});
    pid_t target = start_target();
    pid_t sender = send_from_child(target, [&] { generate_signals(target); });
    auto undelivered = only(generated(target), [](const Expected& x) { return x.result != "delivered"; });
    expect_events(stop_and_take(*tool, sender, target), sender, undelivered);
}

TEST(SigsnoopExact, SignalListByNameAndNumber)
{
    TPKIT_REQUIRE_LIVE();
    auto tool = sigsnoop({"-s", "winch,SIGUSR2,9", "-n"});
    pid_t target = start_target();
    pid_t sender = send_from_child(target, [&] { generate_signals(target); });
    auto events = stop_and_take(*tool, sender, target);
    ASSERT_EQ(events.size(), 2u); // of the signals generated, SIGUSR2 and SIGKILL
    // -n: SIG is the name, in JSON too.
    EXPECT_EQ(events[0].at("sig"), "SIGUSR2");
    EXPECT_EQ(events[0].at("result"), "ignored");
    EXPECT_EQ(events[1].at("sig"), "SIGKILL");
    EXPECT_EQ(events[1].at("result"), "delivered");
}

TEST(SigsnoopExact, KillCallsWithTheirResults)
{
    TPKIT_REQUIRE_LIVE();
    auto tool = kill_calls_tool("sigsnoop", {"-k"});
    pid_t target = start_target();
    pid_t sender = send_from_child(target, [&] { kill_calls(target); });
    expect_events(stop_and_take(*tool, sender), sender, calls(target));
}

TEST(SigsnoopExact, FailedKillCallsOnly)
{
    TPKIT_REQUIRE_LIVE();
    auto tool = kill_calls_tool("sigsnoop", {"-k", "-x"});
    pid_t target = start_target();
    pid_t sender = send_from_child(target, [&] { kill_calls(target); });
    expect_events(stop_and_take(*tool, sender), sender,
                  only(calls(target), [](const Expected& x) { return x.result != "0"; }));
}

TEST(KillsnoopExact, IsSigsnoopKillCalls)
{
    TPKIT_REQUIRE_LIVE();
    auto tool = kill_calls_tool("killsnoop", {});
    pid_t target = start_target();
    pid_t sender = send_from_child(target, [&] { kill_calls(target); });
    expect_events(stop_and_take(*tool, sender), sender, calls(target));
}

TEST(KillsnoopExact, TargetPidAndSignals)
{
    TPKIT_REQUIRE_LIVE();
    pid_t target = start_target();
    const std::string tpid = std::to_string(target);
    // Handshake through both filters: signal 0 is no signal, so SIGUSR2, ignored by the target.
    auto tool = start_tool(
        "killsnoop", {"--tpid", tpid, "-s", "USR2,KILL"}, [&] { kill(target, SIGUSR2); },
        [&](const Event& e) { return e.count("pid") && e.at("pid") == self && e.at("tpid") == tpid; });
    pid_t sender = send_from_child(target, [&] { kill_calls(target); });
    expect_events(stop_and_take(*tool, sender), sender, only(calls(target), [&](const Expected& x) {
                      return x.tpid == target && (x.sig == SIGUSR2 || x.sig == SIGKILL);
                  }));
}

TEST(SigsnoopLive, UnknownSignalIsAUsageError)
{
    for (const char* tool : {"sigsnoop", "killsnoop"}) {
        ToolRun run({tpkit::live::tool_path(tool), "-s", "9,FOO"});
        EXPECT_EQ(run.wait(10s), 2);
        EXPECT_EQ(run.stderr_text(), std::string(tool) +
                                         ": unknown signal 'FOO': give a name such as TERM or "
                                         "SIGTERM, or a number from 1 to 64\n");
        EXPECT_TRUE(run.lines().empty());
    }
}

TEST(SigsnoopLive, TextColumnsAsBcc)
{
    TPKIT_REQUIRE_LIVE();
    ToolRun run({tpkit::live::tool_path("sigsnoop"), "-n"});
    constexpr int pokes = 100; // 100 ms apart at most
    ASSERT_TRUE(tpkit::live::poke_until_line(
        run, [] { kill(getpid(), SIGWINCH); },
        [](const std::string& l) { return l.find(" SIGWINCH ") != std::string::npos; }, pokes,
        100ms))
        << run.stderr_text();
    EXPECT_EQ(run.stop(SIGINT), 0);
    ASSERT_FALSE(run.lines().empty());
    EXPECT_EQ(run.lines()[0],
              "TIME         PID COMM             SIG             TPID TCOMM            RESULT");
}
