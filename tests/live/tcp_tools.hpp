// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What the TCP tools' live tests share: a tool started with --json and shown live by marker
// connections in the test's network namespace, and its events read back.
#pragma once

#include "net_namespace.hpp"
#include "tool_run.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpkit::live {

using TcpEvent = std::map<std::string, std::string>;

// The port marker connections go to; tests use other ports.
constexpr std::uint16_t tcp_marker_port = 5999;

// NAME --json ARGS..., once it shows a marker: a connect to tcp_marker_port on IPv4's loopback
// in `ns`, refused, or with `accepted_marker` accepted by a server there.
inline std::unique_ptr<ToolRun> start_tcp_tool(const std::string& name, std::vector<std::string> args,
                                               const NetNamespace& ns, bool accepted_marker = false)
{
    using namespace std::chrono_literals;
    args.insert(args.begin(), {tool_path(name), "--json"});
    auto tool = std::make_unique<ToolRun>(args);
    const std::string marker = std::to_string(tcp_marker_port);
    bool live = poke_until_line(
        *tool,
        [&] {
            if (accepted_marker)
                run_tcp_session(ns, Inet::v4, tcp_marker_port, 1, 1);
            else
                run_tcp_client(ns, Inet::v4, {tcp_marker_port}, 0, 0);
        },
        [&](const std::string& line) {
            TcpEvent e = parse_flat_json(line);
            return e["rport"] == marker || e["dport"] == marker || e["lport"] == marker;
        },
        100, 100ms);
    if (!live)
        ADD_FAILURE() << name << " never showed a marker connection; stderr: " << tool->stderr_text();
    return tool;
}

// The events of process `pid`, in order.
inline std::vector<TcpEvent> of_pid(const std::vector<TcpEvent>& events, pid_t pid)
{
    std::vector<TcpEvent> out;
    for (const auto& e : events)
        if (e.at("pid") == std::to_string(pid))
            out.push_back(e);
    return out;
}

// Whether a JSON value is a whole number (not null).
inline bool is_number(const std::string& value)
{
    return !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
}

// Stops the tool (SIGINT, exit 0, nothing lost) and returns its events: the JSON lines with a
// "pid", in order.
inline std::vector<TcpEvent> stop_and_take_events(ToolRun& tool)
{
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    EXPECT_EQ(tool.lines().empty() ? "" : tool.lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    std::vector<TcpEvent> events;
    for (const auto& line : tool.lines()) {
        TcpEvent e = parse_flat_json(line);
        if (e.count("pid"))
            events.push_back(std::move(e));
    }
    return events;
}

// A child named `comm` in a private network namespace runs `script(report_fd)` (0: each step
// went as expected, else which did not) under NAME --json -p CHILD ARGS... once that holds `links`
// links. Once `expected` events of the child arrived (or the wait ran out) the tool stops: the
// child's events, in order, all the tool gave; what the child wrote to report_fd into *report.
template <class Report>
std::vector<TcpEvent> events_of_script(const std::string& name, std::vector<std::string> args,
                                       std::size_t links, const char* comm,
                                       const std::function<int(int)>& script, std::size_t expected,
                                       Report* report)
{
    using namespace std::chrono_literals;
    NetNamespace ns;
    int report_pipe[2];
    if (pipe2(report_pipe, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    std::vector<TcpEvent> events;
    {
        ScriptedChild child(
            comm, [&] { return ns.enter() ? 0 : 1; }, [&] { return script(report_pipe[1]); });
        const std::string pid = std::to_string(child.pid());
        args.insert(args.begin(), {"-p", pid});
        auto tool = attached_json_tool(name, args, links);
        EXPECT_EQ(child.go_and_wait(), 0) << comm << " failed at that step";
        std::size_t seen = 0;
        tool->wait_for_line(
            [&](const std::string& line) { return (seen += parse_flat_json(line)["pid"] == pid) >= expected; },
            10s);
        events = of_pid(stop_and_take_events(*tool), child.pid());
    }
    close(report_pipe[1]);
    EXPECT_EQ(read(report_pipe[0], report, sizeof(*report)), ssize_t(sizeof(*report)))
        << comm << " reported nothing";
    close(report_pipe[0]);
    return events;
}

} // namespace tpkit::live
