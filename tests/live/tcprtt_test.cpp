// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tcprtt against the kernel's own trace of tcp:tcp_probe, taken in a private trace instance over
// the same TCP sessions on the loopback of a private network namespace: the histogram holds
// exactly the traced samples of the selected sockets (their srtt, in the same log2 buckets),
// and none of a session on another port that runs in the same window.
#include "live.hpp"
#include "net_namespace.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include <tpkit/hist.h>
#include <tpkit/output/histogram.hpp>

#include <signal.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::Inet;

namespace {

constexpr std::uint16_t rtt_server_port = 5020, rtt_other_port = 5021;
constexpr std::size_t rtt_request = 3000, rtt_reply = 200001; // the reply spans several segments
constexpr int rtt_server_sessions = 3; // and one on rtt_other_port

constexpr std::size_t tcprtt_links = 1; // tcp_probe

// What the trace instance selects: "sport" for samples of the server's sockets (local port
// server_port), "dport" for the clients' (remote port server_port).
struct Side {
    std::string field;
    std::string tool_option;
};
const Side server_side{"sport", "-p"}, client_side{"dport", "-P"};

std::vector<std::uint64_t> traced_srtts(tpkit::live::TraceInstance& trace)
{
    static const std::regex srtt(" srtt=([0-9]+) ");
    std::vector<std::uint64_t> values;
    for (const auto& line : trace.take_lines()) {
        std::smatch m;
        if (std::regex_search(line, m, srtt))
            values.push_back(std::stoull(m[1]));
    }
    return values;
}

// low → count, as the tool's JSON buckets show them.
std::map<std::uint64_t, std::uint64_t> log2_buckets(const std::vector<std::uint64_t>& values)
{
    std::vector<std::uint64_t> slots(TPKIT_LOG2_SLOTS);
    for (auto v : values)
        slots[tpkit_log2_u64(v)]++;
    std::map<std::uint64_t, std::uint64_t> buckets;
    const auto hist = tpkit::Histogram::from_log2(slots);
    for (const auto& b : hist.buckets())
        if (b.count)
            buckets[b.low] = b.count;
    return buckets;
}

struct Traced {
    std::vector<std::string> lines; // the tool's JSON
    std::vector<std::uint64_t> srtts; // the trace's samples of `side`, in the tool's unit
};

// tcprtt --json ARGS while sessions on server_port and one on other_port run; the kernel's
// trace of tcp_probe for `side` of server_port alongside.
Traced run_sessions(Inet inet, const Side& side, std::vector<std::string> args, bool milliseconds = false)
{
    Traced run;
    tpkit::live::NetNamespace ns;
    tpkit::live::TraceInstance trace("tcprtt");
    const std::string refused =
        trace.set_filter("tcp", "tcp_probe", side.field + " == " + std::to_string(rtt_server_port));
    EXPECT_EQ(refused, "");
    args.insert(args.begin(), {side.tool_option, std::to_string(rtt_server_port)});
    auto tool = tpkit::live::attached_json_tool("tcprtt", args, tcprtt_links);
    if (!tool)
        return run;
    trace.enable("tcp", "tcp_probe", true);
    for (int i = 0; i < rtt_server_sessions; i++)
        EXPECT_EQ(tpkit::live::run_tcp_session(ns, inet, rtt_server_port, rtt_request, rtt_reply).status, 0);
    EXPECT_EQ(tpkit::live::run_tcp_session(ns, inet, rtt_other_port, rtt_request, rtt_reply).status, 0);
    trace.enable("tcp", "tcp_probe", false);
    EXPECT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
    run.lines = tool->lines();
    for (auto v : traced_srtts(trace))
        run.srtts.push_back(milliseconds ? v / 1000 : v);
    // Each session gives each side at least its request (or reply) and the peer's FIN.
    EXPECT_GE(run.srtts.size(), 2u * rtt_server_sessions);
    return run;
}

void expect_trace_histogram(Inet inet, const Side& side, const std::vector<std::string>& args,
                            const std::optional<std::string>& key = std::nullopt,
                            bool milliseconds = false)
{
    TPKIT_REQUIRE_LIVE();
    Traced run = run_sessions(inet, side, args, milliseconds);
    EXPECT_EQ(tpkit::live::histogram_buckets(run.lines, key), log2_buckets(run.srtts));
}

} // namespace

TEST(TcprttExact, ServerSamplesEqualTheKernelTraceIpv4)
{
    expect_trace_histogram(Inet::v4, server_side, {});
}

TEST(TcprttExact, ClientSamplesEqualTheKernelTraceIpv6)
{
    expect_trace_histogram(Inet::v6, client_side, {});
}

TEST(TcprttExact, MillisecondsDivideTheSamples)
{
    expect_trace_histogram(Inet::v4, client_side, {"-m"}, std::nullopt, true);
}

TEST(TcprttExact, ByLocalAddressKeysByTheServersAddress)
{
    expect_trace_histogram(Inet::v4_mapped, server_side, {"-b"}, "::ffff:127.0.0.1");
}

TEST(TcprttExact, ByRemoteAddressKeysByThePeersAddress)
{
    expect_trace_histogram(Inet::v6, client_side, {"-B"}, "::1");
}

TEST(TcprttExact, AddressFiltersKeepTheirSockets)
{
    expect_trace_histogram(Inet::v4, server_side, {"-a", "127.0.0.1", "-A", "127.0.0.1"});
}

TEST(TcprttExact, AddressOfAnotherFamilyKeepsNothing)
{
    TPKIT_REQUIRE_LIVE();
    Traced run = run_sessions(Inet::v4, server_side, {"-a", "::1"});
    EXPECT_TRUE(tpkit::live::histogram_buckets(run.lines, std::nullopt).empty());
}

// -e: each histogram's sample count and its average, rounded, beside it.
TEST(TcprttExact, ExtensionShowsCountAndAverage)
{
    TPKIT_REQUIRE_LIVE();
    Traced run = run_sessions(Inet::v6, server_side, {"-e", "-b"});
    std::uint64_t sum = 0;
    for (auto v : run.srtts)
        sum += v;
    const std::uint64_t count = run.srtts.size();
    std::vector<std::map<std::string, std::string>> rows;
    for (const auto& line : run.lines) {
        auto row = tpkit::live::parse_flat_json(line);
        if (row.count("avg_usecs"))
            rows.push_back(row);
    }
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["laddr"], "::1");
    EXPECT_EQ(rows[0]["count"], std::to_string(count));
    EXPECT_EQ(rows[0]["avg_usecs"], std::to_string((sum + count / 2) / count));
}

TEST(TcprttErrors, BadAddressIsUsageError)
{
    tpkit::live::ToolRun run({tpkit::live::tool_path("tcprtt"), "-A", "127.0.0.300"});
    EXPECT_EQ(run.wait(10s), 2);
    EXPECT_EQ(run.stderr_text(), "tcprtt: --raddr: '127.0.0.300' is not an IPv4 or IPv6 address (see --help)\n");
}

TEST(TcprttErrors, BadPortIsUsageError)
{
    tpkit::live::ToolRun run({tpkit::live::tool_path("tcprtt"), "-p", "70000"});
    EXPECT_EQ(run.wait(10s), 2);
    EXPECT_EQ(run.stderr_text(), "tcprtt: --lport: '70000' is not a port (1 to 65535) (see --help)\n");
}
