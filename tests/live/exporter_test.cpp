// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpkit-exporter end to end: a real Prometheus server scrapes it while known events happen, and
// stores exactly those counts and buckets; promtool accepts both exposition formats; bad
// configurations give one line naming file, line and key; misbehaving clients do not stop a
// scraper; SIGHUP reloads atomically; privileges are gone once attached; nothing stays loaded.
#include "live.hpp"
#include "tool_run.hpp"

#include <tpkit/kernel/tracefs.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;
namespace fs = std::filesystem;

namespace {

int free_port()
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
}

class TempDir {
public:
    TempDir()
    {
        char path[] = "/tmp/tpkit-exporter-XXXXXX";
        dir_ = mkdtemp(path);
    }
    ~TempDir() { fs::remove_all(dir_); }
    std::string file(const std::string& name, const std::string& text) const
    {
        const std::string path = dir_ + "/" + name;
        std::ofstream(path) << text;
        return path;
    }
    const std::string& path() const { return dir_; }

private:
    std::string dir_;
};

struct Response {
    int status = 0;
    std::string body;
    std::string content_type;
};

// `timeout`: Prometheus' default scrape timeout unless given.
Response get(int port, const std::string& path, const std::string& accept = {},
             std::chrono::seconds timeout = 10s)
{
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(timeout.count(), 0);
    httplib::Headers headers;
    if (!accept.empty())
        headers.emplace("Accept", accept);
    auto result = client.Get(path.c_str(), headers);
    if (!result)
        return {};
    return {result->status, result->body, result->get_header_value("Content-Type")};
}

// How many of `fds` (connecting, non-blocking) are connected by `timeout` from now.
std::size_t wait_connected(const std::vector<int>& fds, std::chrono::milliseconds timeout)
{
    std::vector<pollfd> pending;
    for (int fd : fds)
        pending.push_back({fd, POLLOUT, 0});
    std::size_t connected = 0;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pending.empty()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || poll(pending.data(), pending.size(), static_cast<int>(left.count())) <= 0)
            break;
        std::erase_if(pending, [&](const pollfd& p) {
            if (!p.revents)
                return false;
            int error = 0;
            socklen_t len = sizeof(error);
            getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &error, &len);
            connected += error == 0 && !(p.revents & (POLLERR | POLLHUP));
            return true;
        });
    }
    return connected;
}

// A non-blocking TCP connection to 127.0.0.1:port, connected within `wait` (0: only begun, a
// full backlog does not stall the test).
int connect_to(int port, std::chrono::milliseconds wait = 2s)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    if (wait.count() > 0)
        wait_connected({fd}, wait);
    return fd;
}

// The value of the sample `series` (name and labels exactly as exposed) in an exposition.
std::optional<double> sample(const std::string& body, const std::string& series)
{
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(series + " ", 0) == 0)
            return std::stod(line.substr(series.size() + 1));
    return std::nullopt;
}

// The exporter on a free loopback port, serving once its metrics are attached.
class RunningExporter {
public:
    // wrapper: a command that runs the exporter in its conditions (setpriv …), or nothing.
    explicit RunningExporter(const std::string& config, const std::vector<std::string>& options = {},
                             const std::vector<std::string>& wrapper = {})
        : port_(free_port())
    {
        std::vector<std::string> argv = wrapper;
        argv.insert(argv.end(), {tpkit::live::tool_path("tpkit-exporter"), "--config", config,
                                 "--web.listen-address", "127.0.0.1:" + std::to_string(port_)});
        argv.insert(argv.end(), options.begin(), options.end());
        run_ = std::make_unique<ToolRun>(argv);
        const auto deadline = std::chrono::steady_clock::now() + tpkit::live::patient(20s);
        while (std::chrono::steady_clock::now() < deadline && get(port_, "/metrics").status != 200)
            std::this_thread::sleep_for(100ms);
    }

    int port() const { return port_; }
    ToolRun& run() { return *run_; }
    std::string metrics() { return get(port_, "/metrics").body; }

    // SIGHUP, then the reload's outcome once served: true when the running configuration's
    // load time changed, false when last_reload_successful turned from 1 to 0 (a failure right
    // after another is not seen), nullopt when neither came in time.
    std::optional<bool> reload()
    {
        const std::string loaded_at = "tpkit_exporter_config_last_reload_success_timestamp_seconds";
        const std::string successful = "tpkit_exporter_config_last_reload_successful";
        std::string body = metrics();
        const auto time_before = sample(body, loaded_at);
        const bool successful_before = sample(body, successful) == 1.0;
        kill(run_->pid(), SIGHUP);
        const auto deadline = std::chrono::steady_clock::now() + tpkit::live::patient(20s);
        while (std::chrono::steady_clock::now() < deadline) {
            body = metrics();
            if (successful_before && sample(body, successful) == 0.0)
                return false;
            if (auto time = sample(body, loaded_at); time && time != time_before)
                return true;
            std::this_thread::sleep_for(50ms);
        }
        return std::nullopt;
    }

    // Waits until the sample `series` is `expected`; the last value seen.
    std::optional<double> wait_for(const std::string& series, double expected)
    {
        std::optional<double> seen;
        const auto deadline = std::chrono::steady_clock::now() + tpkit::live::patient(10s);
        while (std::chrono::steady_clock::now() < deadline) {
            seen = sample(metrics(), series);
            if (seen == expected)
                break;
            std::this_thread::sleep_for(50ms);
        }
        return seen;
    }

private:
    int port_;
    std::unique_ptr<ToolRun> run_;
};

// A Prometheus server on loopback scraping `target` every second, its data in `dir`.
class PrometheusServer {
public:
    PrometheusServer(const TempDir& dir, int target) : port_(free_port())
    {
        const std::string config = dir.file(
            "prometheus.yml", "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                              "scrape_configs:\n  - job_name: tpkit\n    static_configs:\n"
                              "      - targets: ['127.0.0.1:" + std::to_string(target) + "']\n");
        run_ = std::make_unique<ToolRun>(std::vector<std::string>{
            "/usr/bin/prometheus", "--config.file=" + config,
            "--storage.tsdb.path=" + dir.path() + "/data",
            "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"});
    }
    ~PrometheusServer() { run_->stop(SIGTERM); }

    // The result vector of an instant query (at `time`, seconds since the epoch, when given).
    nlohmann::json query(const std::string& promql, std::optional<double> time = {}) const
    {
        httplib::Client client("127.0.0.1", port_);
        httplib::Params params{{"query", promql}};
        if (time)
            params.emplace("time", std::to_string(*time));
        auto result = client.Get("/api/v1/query", params, httplib::Headers{});
        if (!result || result->status != 200)
            return nlohmann::json::array();
        return nlohmann::json::parse(result->body)["data"]["result"];
    }

    // The single value of an instant query, if it has exactly one.
    std::optional<double> value(const std::string& promql, std::optional<double> time = {}) const
    {
        auto result = query(promql, time);
        if (result.size() != 1)
            return std::nullopt;
        return std::stod(result[0]["value"][1].get<std::string>());
    }

    // Waits until the query gives `expected` (a scrape after the events); the last value seen.
    std::optional<double> wait_for(const std::string& promql, double expected) const
    {
        std::optional<double> seen;
        const auto deadline = std::chrono::steady_clock::now() + tpkit::live::patient(30s);
        while (std::chrono::steady_clock::now() < deadline) {
            seen = value(promql);
            if (seen == expected)
                break;
            std::this_thread::sleep_for(250ms);
        }
        return seen;
    }

private:
    int port_;
    std::unique_ptr<ToolRun> run_;
};

double now_seconds()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// This process's getppid() and read()s of one /dev/zero descriptor, counted by the exporter.
std::string events_config(int zero_fd)
{
    const std::string self = std::to_string(getpid());
    return "metrics:\n"
           "  - name: getppid\n"
           "    help: getppid() calls of the test\n"
           "    count: syscalls:sys_enter_getppid\n"
           "    args: [-p, '" + self + "']\n"
           "  - name: zero_read_size\n"
           "    hist: syscalls:sys_enter_read\n"
           "    field: count\n"
           "    unit: bytes\n"
           "    filter: fd == " + std::to_string(zero_fd) + "\n"
           "    args: [-p, '" + self + "']\n"
           "  - name: getppid_syscalls\n"
           "    tool: syscount\n"
           "    args: [--syscall, getppid, -p, '" + self + "']\n";
}

void make_events(int getppids, int zero_fd, const std::vector<std::size_t>& reads)
{
    for (int i = 0; i < getppids; i++)
        syscall(SYS_getppid);
    std::vector<char> buffer(8192);
    for (std::size_t n : reads)
        ASSERT_EQ(read(zero_fd, buffer.data(), n), static_cast<ssize_t>(n));
}

// A /dev/zero descriptor for the test's reads.
struct ZeroFile {
    int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    ~ZeroFile() { close(fd); }
};

bool prometheus_installed()
{
    return access("/usr/bin/prometheus", X_OK) == 0 && access("/usr/bin/promtool", X_OK) == 0;
}

} // namespace

// Host only (not an *Exact suite the 6.1 VM runs): the VM has no Prometheus.
TEST(ExporterLive, PrometheusStoresTheEventsMade)
{
    TPKIT_REQUIRE_LIVE();
    ASSERT_TRUE(prometheus_installed()) << "Debian's prometheus package is needed";
    TempDir dir;
    ZeroFile zero;
    RunningExporter exporter(dir.file("exporter.yaml", events_config(zero.fd)));
    ASSERT_TRUE(sample(exporter.metrics(), "tpkit_getppid_total")) << exporter.metrics();
    PrometheusServer prometheus(dir, exporter.port());
    // Scraped at least once before the events: the counter's stored value is then 0.
    ASSERT_EQ(prometheus.wait_for("tpkit_getppid_total", 0), 0.0);
    const double before = now_seconds();

    constexpr int getppids = 37;
    // Reads of 100 bytes, in [64, 127], and of 5000, in [4096, 8191] (log2 buckets).
    constexpr int small_reads = 3, large_reads = 2, all_reads = small_reads + large_reads;
    std::vector<std::size_t> reads(small_reads, 100);
    reads.insert(reads.end(), large_reads, 5000);
    make_events(getppids, zero.fd, reads);

    EXPECT_EQ(prometheus.wait_for("tpkit_getppid_total", getppids), getppids);
    EXPECT_EQ(prometheus.value("tpkit_getppid_total", before), 0.0);
    EXPECT_EQ(prometheus.wait_for("tpkit_getppid_syscalls_total{syscall=\"getppid\"}", getppids),
              getppids);
    EXPECT_EQ(prometheus.wait_for("tpkit_zero_read_size_bytes_count", all_reads), all_reads);
    EXPECT_EQ(prometheus.value("tpkit_zero_read_size_bytes_bucket{le=\"63\"}"), 0.0);
    EXPECT_EQ(prometheus.value("tpkit_zero_read_size_bytes_bucket{le=\"127\"}"), small_reads);
    EXPECT_EQ(prometheus.value("tpkit_zero_read_size_bytes_bucket{le=\"4095\"}"), small_reads);
    EXPECT_EQ(prometheus.value("tpkit_zero_read_size_bytes_bucket{le=\"8191\"}"), all_reads);
    EXPECT_EQ(prometheus.value("tpkit_zero_read_size_bytes_bucket{le=\"+Inf\"}"), all_reads);
    // The median falls in [64, 127]: histogram_quantile interpolates inside that bucket.
    auto median = prometheus.value("histogram_quantile(0.5, tpkit_zero_read_size_bytes_bucket)");
    ASSERT_TRUE(median);
    EXPECT_GT(*median, 63);
    EXPECT_LE(*median, 127);

    // Prometheus asks for OpenMetrics first: what it stored came through that format.
    auto om_scrapes = prometheus.value("tpkit_exporter_scrapes_total{format=\"openmetrics\"}");
    ASSERT_TRUE(om_scrapes);
    EXPECT_GT(*om_scrapes, 0);
    EXPECT_EQ(prometheus.value("up{job=\"tpkit\"}"), 1.0);

    EXPECT_EQ(exporter.run().stop(SIGTERM), 0) << exporter.run().stderr_text();
}

// promtool lints the text format; OpenMetrics is parsed by Prometheus itself in the test above.
TEST(ExporterLive, PromtoolAcceptsTheTextFormat)
{
    TPKIT_REQUIRE_LIVE();
    ASSERT_TRUE(prometheus_installed()) << "Debian's prometheus package is needed";
    TempDir dir;
    ZeroFile zero;
    const std::string config = events_config(zero.fd) +
                               "  - name: runqueue_latency\n    tool: runqlat\n"
                               "  - name: softirq\n    tool: softirqs\n"
                               "  - name: fork_children\n    count: sched:sched_process_fork\n"
                               "    by: child_comm\n";
    RunningExporter exporter(dir.file("exporter.yaml", config));
    constexpr int getppids = 3;
    make_events(getppids, zero.fd, {100});
    for (const std::string accept : {"", "application/openmetrics-text; version=1.0.0"}) {
        Response r = get(exporter.port(), "/metrics", accept);
        ASSERT_EQ(r.status, 200);
        const bool om = !accept.empty();
        EXPECT_EQ(r.content_type, om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                     : "text/plain; version=0.0.4; charset=utf-8");
        EXPECT_EQ(r.body.ends_with("# EOF\n"), om);
        EXPECT_NE(r.body.find("tpkit_runqueue_latency_seconds_bucket{le=\"+Inf\"}"),
                  std::string::npos);
        if (om)
            continue;
        const std::string file = dir.file("text.txt", r.body);
        const std::string command = "promtool check metrics < " + file + " 2>&1";
        std::string output;
        FILE* pipe = popen(command.c_str(), "r");
        char buffer[512];
        while (fgets(buffer, sizeof(buffer), pipe))
            output += buffer;
        EXPECT_EQ(pclose(pipe), 0) << output;
    }
    EXPECT_EQ(exporter.run().stop(SIGTERM), 0);
}

TEST(ExporterLive, BadConfigurationsSayFileLineAndKey)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    struct Case {
        const char* what;
        std::string yaml;
        int exit;
        std::string line_key; // ":LINE: …key 'KEY'"
    };
    const std::vector<Case> cases = {
        {"bad YAML", "metrics:\n  - name: a\n    count: [x, y\n", 2, ":4:"},
        {"no metrics", "other: 1\n", 2, ":1: key 'metrics'"},
        {"unknown engine", "metrics:\n  - name: a\n    gauge: sched:sched_switch\n", 2,
         ":3: key 'gauge': unknown"},
        {"unknown tool", "metrics:\n  - name: a\n    tool: nosuchtool\n", 4,
         ":3: metric a: key 'tool': unknown tool 'nosuchtool'"},
        {"unknown tracepoint", "metrics:\n  - name: a\n    count: nosuch:event\n", 4,
         ":3: metric a: key 'count'"},
        {"unknown field", "metrics:\n  - name: a\n    hist: sched:sched_switch\n    field: nosuch\n",
         4, ":4: metric a: key 'field'"},
        {"string field", "metrics:\n  - name: a\n    hist: sched:sched_switch\n    field: prev_comm\n",
         2, ":4: metric a: key 'field'"},
        {"bad filter",
         "metrics:\n  - name: a\n    count: sched:sched_switch\n    filter: 'prev_pid =='\n", 2,
         ":4: metric a: key 'filter'"},
        {"bad key", "metrics:\n  - name: a\n    count: sched:sched_switch\n    by: nosuch\n", 4,
         ":4: metric a: key 'by'"},
        {"duplicate name",
         "metrics:\n  - name: a\n    count: sched:sched_switch\n  - name: a\n    count: "
         "sched:sched_wakeup\n",
         2, ":4: key 'name': metric a is already defined on line 2"},
        {"bad name", "metrics:\n  - name: 1a\n    count: sched:sched_switch\n", 2, ":2: key 'name'"},
        {"bad tool option", "metrics:\n  - name: a\n    tool: runqlat\n    args: [--nosuch]\n", 2,
         ":4: metric a: key 'args'"},
        {"bad buckets",
         "metrics:\n  - name: a\n    hist: sched:sched_switch\n    field: prev_pid\n    buckets: "
         "{linear: [10, 5, 1]}\n",
         2, ":5: metric a: key 'buckets'"},
        {"loglinear 0",
         "metrics:\n  - name: a\n    hist: sched:sched_switch\n    field: prev_pid\n    buckets: "
         "{loglinear: 0}\n",
         2, ":5: key 'buckets': loglinear 0: expected 1 to 4"},
        {"two sources",
         "metrics:\n  - name: a\n    count: sched:sched_switch\n    tool: runqlat\n", 2,
         ":2: each metric needs exactly one source"},
        // Found by fuzzing: a list as a key let yaml-cpp's exception out of the reader (exit 1,
        // no line); yaml-cpp quotes a bad byte as is, which could break the line.
        {"a list as a key", "metrics:\n  - name: a\n    ? [count]\n    : sched:sched_switch\n", 2,
         ":3: a key must be a single value"},
        // Called valid by --config.check, these crashed the exporter at start (an empty list of
        // events; the build's --man-page, --help or --version among a tool's args).
        {"no event", "metrics:\n  - name: a\n    count: []\n", 2, ":3: key 'count': an empty list"},
        {"a documentation request as args", "metrics:\n  - name: a\n    tool: runqlat\n    args: [--man-page]\n",
         2, ":4: metric a: key 'args': a documentation request answers and exits"},
        {"--help as args", "metrics:\n  - name: a\n    tool: runqlat\n    args: [--help]\n", 2,
         ":4: metric a: key 'args': --help answers and exits"},
        {"--version as args", "metrics:\n  - name: a\n    tool: runqlat\n    args: [--version]\n", 2,
         ":4: metric a: key 'args': --version answers and exits"},
        // Found by fuzzing: yaml-cpp 0.7's LoadAll never returned on these (its parser read an
        // empty document at one place again and again, growing memory).
        {"a lone comma", ",\n", 2, ":1: not YAML: nothing here starts a value"},
        {"a tagged comma", ",!e-com, :", 2, ":1: not YAML: nothing here starts a value"},
        {"a control byte in YAML's message", "metrics:\n  - name: \"a\\\x01\"\n", 2,
         ":2: unknown escape character: \\x01"},
    };
    for (const Case& c : cases) {
        const std::string file = dir.file("bad.yaml", c.yaml);
        ToolRun run({tpkit::live::tool_path("tpkit-exporter"), "--config", file, "--config.check"});
        const int status = run.wait(tpkit::live::patient(10s));
        const std::string err = run.stderr_text();
        EXPECT_EQ(status, c.exit) << c.what << ": " << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << c.what << ": " << err;
        EXPECT_NE(err.find("tpkit-exporter: " + file + c.line_key), std::string::npos)
            << c.what << ": " << err;
    }
}

// What cannot be read as a file is a bad configuration (2), named, in one line.
TEST(ExporterLive, UnreadableConfigurationIsOneLineWithItsName)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {dir.path(), "Is a directory"},
        {"/proc/self/mem", "Input/output error"},
        {dir.path() + "/missing.yaml", "No such file or directory"},
        {"/dev/zero", "larger than 16 MiB"},
    };
    for (const auto& [file, why] : cases) {
        ToolRun run({tpkit::live::tool_path("tpkit-exporter"), "--config", file, "--config.check"});
        EXPECT_EQ(run.wait(tpkit::live::patient(10s)), 2) << file;
        EXPECT_EQ(run.stderr_text(),
                  "tpkit-exporter: " + file + ": cannot read the configuration file: " + why + "\n");
    }
}

TEST(ExporterLive, MisbehavingClientsDoNotStopScrapes)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    ZeroFile zero;
    RunningExporter exporter(dir.file("exporter.yaml", events_config(zero.fd)));
    const int port = exporter.port();
    auto connect_socket = [&] { return connect_to(port); };
    constexpr int idle = 60, slow = 10, oversized = 5, not_found_requests = 100, scrapes = 5;
    std::vector<int> held;
    for (int i = 0; i < idle; i++) // connect, send nothing
        held.push_back(connect_socket());
    for (int i = 0; i < slow; i++) { // a request line, then nothing more
        int fd = connect_socket();
        const std::string start = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
        send(fd, start.data(), start.size(), MSG_NOSIGNAL);
        held.push_back(fd);
    }
    for (int i = 0; i < oversized; i++) { // a header far beyond any limit
        int fd = connect_socket();
        const std::string huge =
            "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(100000, 'a') + "\r\n\r\n";
        send(fd, huge.data(), huge.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        held.push_back(fd);
    }
    int not_found = 0;
    for (int i = 0; i < not_found_requests; i++)
        not_found += get(port, "/no/such/path/" + std::to_string(i)).status == 404;
    EXPECT_EQ(not_found, not_found_requests);
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(2, 0);
    auto posted = client.Post("/metrics", "x=1", "application/x-www-form-urlencoded");
    EXPECT_EQ(posted ? posted->status : 0, 405);

    for (int scrape = 0; scrape < scrapes; scrape++) {
        syscall(SYS_getppid);
        Response r = get(port, "/metrics");
        ASSERT_EQ(r.status, 200) << "scrape " << scrape;
        EXPECT_EQ(sample(r.body, "tpkit_getppid_total"), scrape + 1.0);
    }
    for (int fd : held)
        close(fd);
    EXPECT_EQ(exporter.run().stop(SIGTERM), 0) << exporter.run().stderr_text();
}

// Thousands of idle connections and slow requests held open: each scrape is answered within a
// timeout well below the exporter's 5 s idle timeout (with a thread per connection and a short
// listen backlog, a scrape waited behind the idle connections: bench/BENCHMARKS.md, "Figures
// the comments point to").
TEST(ExporterLive, HeldConnectionsDoNotStallScrapes)
{
    TPKIT_REQUIRE_LIVE();
    constexpr std::size_t idle = 2000, slow = 200;
    constexpr int scrapes = 5;
    rlimit files{};
    getrlimit(RLIMIT_NOFILE, &files);
    constexpr std::size_t other_files = 100; // the test's own, headroom
    const rlim_t needed = idle + slow + other_files;
    ASSERT_GE(files.rlim_max, needed) << "ulimit -Hn";
    if (files.rlim_cur < needed) {
        files.rlim_cur = needed;
        ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &files), 0);
    }
    TempDir dir;
    ZeroFile zero;
    RunningExporter exporter(dir.file("exporter.yaml", events_config(zero.fd)));
    const int port = exporter.port();

    const auto start = std::chrono::steady_clock::now();
    std::vector<int> held;
    for (std::size_t i = 0; i < idle + slow; i++)
        held.push_back(connect_to(port, 0ms));
    ASSERT_EQ(wait_connected(held, tpkit::live::patient(5s)), held.size());
    const std::string begun = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    for (std::size_t i = idle; i < held.size(); i++)
        send(held[i], begun.data(), begun.size(), MSG_NOSIGNAL);

    for (int scrape = 0; scrape < scrapes; scrape++) {
        syscall(SYS_getppid);
        Response r = get(port, "/metrics", {}, 2s);
        ASSERT_EQ(r.status, 200) << "scrape " << scrape;
        EXPECT_EQ(sample(r.body, "tpkit_getppid_total"), scrape + 1.0);
    }
    // The scrapes were answered while the exporter held every connection, not after it had let
    // them go (when this ran faster than its idle timeout, as it should).
    if (std::chrono::steady_clock::now() - start < 4s) {
        std::size_t open = 0;
        char byte;
        for (int fd : held)
            open += recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && errno == EAGAIN;
        EXPECT_EQ(open, held.size());
    }
    for (int fd : held)
        close(fd);
    EXPECT_EQ(exporter.run().stop(SIGTERM), 0) << exporter.run().stderr_text();
}

// A second exporter on a listening exporter's address (or on every address, its port) is
// refused: it exits 1 with one line, and the first goes on serving its own counts alone.
TEST(ExporterLive, ASecondExporterOnTheSameAddressIsRefused)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    ZeroFile zero;
    const std::string config = dir.file("exporter.yaml", events_config(zero.fd));
    RunningExporter first(config);
    const std::string port = std::to_string(first.port());
    constexpr int getppids = 3, scrapes = 5;
    make_events(getppids, zero.fd, {});
    for (const std::string& address : {"127.0.0.1:" + port, ":" + port}) {
        ToolRun second({tpkit::live::tool_path("tpkit-exporter"), "--config", config,
                        "--web.listen-address", address});
        EXPECT_EQ(second.wait(tpkit::live::patient(10s)), 1) << address;
        EXPECT_EQ(second.stderr_text(),
                  "tpkit-exporter: cannot listen on " + address + ": address already in use\n");
    }
    for (int scrape = 1; scrape <= scrapes; scrape++) {
        syscall(SYS_getppid);
        EXPECT_EQ(sample(first.metrics(), "tpkit_getppid_total"), getppids + scrape)
            << "scrape " << scrape;
    }
    EXPECT_EQ(first.run().stop(SIGTERM), 0) << first.run().stderr_text();
}

// Port 0 takes a free port: the "serving" line names the one the kernel gave, and it serves.
TEST(ExporterLive, PortZeroSaysThePortItGot)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    ZeroFile zero;
    ToolRun run({tpkit::live::tool_path("tpkit-exporter"), "--config",
                 dir.file("exporter.yaml", events_config(zero.fd)), "--web.listen-address",
                 "127.0.0.1:0"});
    const std::regex serving("serving .* on http://127\\.0\\.0\\.1:(\\d+)/metrics\n");
    std::smatch m;
    const auto deadline = std::chrono::steady_clock::now() + tpkit::live::patient(20s);
    while (!std::regex_search(run.stderr_text(), m, serving) &&
           std::chrono::steady_clock::now() < deadline)
        run.wait_for_line([](const std::string&) { return false; }, 100ms); // reads stderr too
    ASSERT_FALSE(m.empty()) << run.stderr_text();
    const int port = std::stoi(m[1]);
    EXPECT_NE(port, 0);
    EXPECT_EQ(get(port, "/metrics").status, 200);
    EXPECT_EQ(run.stop(SIGTERM), 0) << run.stderr_text();
}

// As nobody with CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH (tracefs is root's), the exporter
// keeps what a reload needs: a reload that adds a count: metric reads tracefs and succeeds.
TEST(ExporterLive, ReloadAsNonRootReadsTracefs)
{
    TPKIT_REQUIRE_LIVE();
    tpkit::tracefs_root(); // mounted, as root: nobody could not
    TempDir dir;
    ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
    const std::string first = "metrics:\n  - name: forks\n    count: sched:sched_process_fork\n";
    const std::string config = dir.file("exporter.yaml", first);
    ASSERT_EQ(chmod(config.c_str(), 0644), 0);
    const std::string caps = "-all,+bpf,+perfmon,+dac_read_search";
    RunningExporter exporter(config, {},
                             {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              "--inh-caps=" + caps, "--ambient-caps=" + caps});
    ASSERT_TRUE(sample(exporter.metrics(), "tpkit_forks_total")) << exporter.run().stderr_text();
    dir.file("exporter.yaml", first + "  - name: getppid\n    count: syscalls:sys_enter_getppid\n");
    EXPECT_EQ(exporter.reload(), std::optional<bool>(true)) << exporter.run().stderr_text();
    syscall(SYS_getppid);
    EXPECT_TRUE(sample(exporter.metrics(), "tpkit_getppid_total")) << exporter.run().stderr_text();
    EXPECT_EQ(exporter.run().stop(SIGTERM), 0) << exporter.run().stderr_text();
}

TEST(ExporterLive, ReloadIsAtomicAndPrivilegesAreGone)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    ZeroFile zero;
    const std::string base = events_config(zero.fd);
    const std::string config = dir.file("exporter.yaml", base);
    RunningExporter exporter(config);
    const pid_t pid = exporter.run().pid();

    // Serving with no effective capability; only what a reload's loading needs is permitted.
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::map<std::string, std::uint64_t> caps;
    for (std::string line; std::getline(status, line);)
        if (line.rfind("Cap", 0) == 0)
            caps[line.substr(0, line.find(':'))] = std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
    // BPF, PERFMON, SYS_RESOURCE, DAC_READ_SEARCH
    constexpr std::uint64_t reload_caps = (1ull << 39) | (1ull << 38) | (1ull << 24) | (1ull << 2);
    EXPECT_EQ(caps["CapEff"], 0u);
    EXPECT_EQ(caps["CapPrm"] & ~reload_caps, 0u);
    EXPECT_EQ(caps["CapBnd"] & ~reload_caps, 0u);
    const auto programs = tpkit::live::programs_held_by(pid);
    ASSERT_FALSE(programs.empty());

    // getppid() calls at the start, after each bad reload, after the good one.
    constexpr int first_getppids = 4, getppids_per_bad_reload = 2, getppids_after_good_reload = 1;
    make_events(first_getppids, zero.fd, {});
    ASSERT_EQ(sample(exporter.metrics(), "tpkit_getppid_total"), first_getppids);

    // Bad configurations: the running one stays, counting on. The last two once took the
    // exporter down (an empty list of events, a documentation request among a tool's args).
    std::string body;
    double expected = first_getppids;
    for (const char* broken : {"  - name: broken\n    count: nosuch:event\n", "  - name: broken\n    count: []\n",
                               "  - name: broken\n    tool: runqlat\n    args: [--man-page]\n"}) {
        dir.file("exporter.yaml", base + broken);
        EXPECT_EQ(exporter.reload(), false) << broken;
        make_events(getppids_per_bad_reload, zero.fd, {});
        expected += getppids_per_bad_reload;
        body = exporter.metrics();
        EXPECT_EQ(sample(body, "tpkit_getppid_total"), expected) << broken;
        EXPECT_FALSE(sample(body, "tpkit_broken_total"));
        // Back to good between the bad ones: the next bad one is seen as failing anew.
        dir.file("exporter.yaml", base);
        ASSERT_EQ(exporter.reload(), true) << exporter.run().stderr_text();
    }

    // A good one: the new metric is loaded (with the capabilities kept for it), the unchanged
    // ones keep running without a reset.
    dir.file("exporter.yaml", base + "  - name: forks\n    count: sched:sched_process_fork\n");
    ASSERT_EQ(exporter.reload(), true) << exporter.run().stderr_text();
    make_events(getppids_after_good_reload, zero.fd, {});
    body = exporter.metrics();
    EXPECT_EQ(sample(body, "tpkit_getppid_total"), expected + getppids_after_good_reload);
    EXPECT_TRUE(sample(body, "tpkit_forks_total"));

    auto all = tpkit::live::programs_held_by(pid);
    EXPECT_EQ(exporter.run().stop(SIGTERM), 0) << exporter.run().stderr_text();
    EXPECT_TRUE(tpkit::live::wait_until_programs_unloaded(all, tpkit::live::patient(5s)));
}

// The README's configuration and the example file are valid on this kernel.
TEST(ExporterLive, ExampleConfigurationsAreValid)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    std::ifstream readme(std::string(TPKIT_SOURCE_DIR) + "/README.md");
    std::stringstream text;
    text << readme.rdbuf();
    const std::string all = text.str();
    const auto fleet = all.find("## Fleet");
    const auto start = all.find("```yaml\nmetrics:", fleet);
    ASSERT_NE(start, std::string::npos);
    const auto body = start + std::string("```yaml\n").size();
    const std::string readme_config = dir.file("readme.yaml", all.substr(body, all.find("```", body) - body));
    for (const std::string& config :
         {readme_config, std::string(TPKIT_SOURCE_DIR) + "/examples/exporter/exporter.yaml"}) {
        ToolRun run({tpkit::live::tool_path("tpkit-exporter"), "--config", config, "--config.check"});
        EXPECT_EQ(run.wait(tpkit::live::patient(10s)), 0) << config << ": " << run.stderr_text();
    }
}

// max_series: the series first seen are kept, the events of later ones are counted apart;
// with kernel.bpf_stats_enabled the programs' runs are served.
TEST(ExporterLive, SeriesLimitCountsWhatItLeavesOut)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    constexpr int max_series = 2;
    const std::string config = dir.file(
        "exporter.yaml", "metrics:\n  - name: getppid_by_thread\n"
                         "    count: syscalls:sys_enter_getppid\n    by: tid\n    max_series: " +
                             std::to_string(max_series) + "\n"
                             "    args: [-p, '" + std::to_string(getpid()) + "']\n");
    RunningExporter exporter(config);
    std::ifstream stats_in("/proc/sys/kernel/bpf_stats_enabled");
    std::string stats_before;
    stats_in >> stats_before;
    std::ofstream("/proc/sys/kernel/bpf_stats_enabled") << "1";

    std::uint64_t made = 0;
    std::string body;
    const std::vector<int> calls_per_thread{5, 6, 7, 8}; // one thread each, a scrape after each
    const double kept_calls = // the first max_series threads'
        std::accumulate(calls_per_thread.begin(), calls_per_thread.begin() + max_series, 0);
    for (int calls : calls_per_thread) {
        std::thread([calls] {
            for (int i = 0; i < calls; i++)
                syscall(SYS_getppid);
        }).join();
        made += calls;
        body = exporter.metrics();
    }
    std::ofstream("/proc/sys/kernel/bpf_stats_enabled") << stats_before;

    double kept = 0;
    int series = 0;
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("tpkit_getppid_by_thread_total{tid=", 0) == 0) {
            kept += std::stod(line.substr(line.rfind(' ') + 1));
            series++;
        }
    EXPECT_EQ(series, max_series) << body;
    EXPECT_EQ(kept, kept_calls) << body;
    EXPECT_EQ(sample(body, "tpkit_exporter_series_limit_events_total{metric=\"getppid_by_thread\"}"),
              static_cast<double>(made) - kept_calls)
        << body;
    auto runs = sample(body, "tpkit_exporter_bpf_program_runs_total{metric=\"getppid_by_thread\","
                             "program=\"count_syscall\"}"); // on raw_syscalls
    ASSERT_TRUE(runs) << body;
    EXPECT_GE(*runs, static_cast<double>(made)); // every syscall of the machine while on
    EXPECT_EQ(sample(body, "tpkit_exporter_programs_attached{metric=\"getppid_by_thread\"}"), 1.0);
    // A raw tracepoint program that nothing else nests on: the kernel skipped none of its runs.
    EXPECT_EQ(sample(body, "tpkit_exporter_skipped_runs_total{metric=\"getppid_by_thread\"}"), 0.0) << body;
    EXPECT_EQ(exporter.run().stop(SIGTERM), 0);
}

// A reload gives back the map memory of the metrics it replaced (counted against
// --max-map-memory), and a failed one only what it loaded itself: alternating two
// configurations, each over a third of the limit, reloads on far past where the limit would
// stop them if nothing were given back.
TEST(ExporterLive, ReloadsGiveBackTheMapMemoryOfWhatTheyReplace)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    // max_series sizes the maps of a metric keyed by pid.
    auto metric = [](const std::string& name) {
        return "  - name: " + name + "\n    count: sched:sched_switch\n    by: pid\n    max_series: 1000\n";
    };
    const std::string config = dir.file("exporter.yaml", "metrics:\n" + metric("switches_a"));
    constexpr double limit = 1 << 20; // --max-map-memory 1 (MiB)
    RunningExporter exporter(config, {"--max-map-memory", "1"});
    const std::string map_memory = "tpkit_exporter_map_memory_bytes";
    const auto charged = sample(exporter.metrics(), map_memory);
    ASSERT_TRUE(charged) << exporter.run().stderr_text();
    // A reload holds the old and the new metric at once: two fit, three do not.
    ASSERT_LE(2 * *charged, limit);
    ASSERT_GT(3 * *charged, limit);

    constexpr int reloads = 8; // each swapping the metric
    for (int reload = 1; reload <= reloads; reload++) {
        const std::string name = reload % 2 ? "switches_b" : "switches_a";
        dir.file("exporter.yaml", "metrics:\n" + metric(name));
        if (exporter.reload() != true) {
            exporter.run().stop(SIGTERM);
            FAIL() << "reload " << reload << ": " << exporter.run().stderr_text();
        }
        EXPECT_NE(exporter.metrics().find("# TYPE tpkit_" + name + "_total counter"), std::string::npos)
            << "reload " << reload;
        // The replaced metric's maps are freed just after the new one serves.
        EXPECT_EQ(exporter.wait_for(map_memory, *charged), *charged) << "reload " << reload;
    }

    // Failed reloads: one whose new metric loaded before the next one failed, one over the
    // limit. The running metric's charge stays, the rest is given back.
    for (const std::string& failing : {metric("switches_c") + "  - name: broken\n    count: nosuch:event\n",
                                       metric("switches_c") + metric("switches_d")}) {
        dir.file("exporter.yaml", "metrics:\n" + failing);
        EXPECT_EQ(exporter.reload(), false) << failing;
        EXPECT_EQ(sample(exporter.metrics(), map_memory), *charged) << failing;
        EXPECT_NE(exporter.metrics().find("# TYPE tpkit_switches_a_total counter"), std::string::npos)
            << failing;
        dir.file("exporter.yaml", "metrics:\n" + metric("switches_a"));
        ASSERT_EQ(exporter.reload(), true) << exporter.run().stderr_text();
    }
    EXPECT_EQ(exporter.run().stop(SIGTERM), 0);
    EXPECT_NE(exporter.run().stderr_text().find("more than the limit of 1.0 MiB"), std::string::npos)
        << exporter.run().stderr_text();
}

// --config.check runs what a start runs, up to loading: what fails at start fails the check,
// with the same exit code and message. Each of these once passed the check and failed at start.
TEST(ExporterLive, CheckFailsAsStartFails)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    struct Case {
        const char* what;
        std::string metrics;
        int exit;
        std::vector<std::string> options;
    };
    const std::string no_such_cpu = std::to_string(libbpf_num_possible_cpus());
    const std::string keyed = "    count: sched:sched_switch\n    by: pid\n    max_series: 1000\n";
    const std::vector<Case> cases = {
        {"a process that does not exist",
         "  - name: a\n    tool: runqlat\n    args: [-p, '999999999']\n", 4, {}},
        {"a disk that does not exist",
         "  - name: a\n    tool: biolatency\n    args: [-d, sdz]\n", 4, {}},
        {"options that exclude each other",
         "  - name: a\n    tool: hardirqs\n    args: [--count, -d]\n", 2, {}},
        {"an unknown errno",
         "  - name: a\n    tool: syscount\n    args: [-e, EFOO]\n", 2, {}},
        {"a CPU this machine does not have",
         "  - name: a\n    count: sched:sched_switch\n    args: [--cpu, '" + no_such_cpu + "']\n", 4, {}},
        // Each fits the limit alone (ReloadsGiveBackTheMapMemoryOfWhatTheyReplace), not all three.
        {"maps over the limit together",
         "  - name: a\n" + keyed + "  - name: b\n" + keyed + "  - name: c\n" + keyed, 2,
         {"--max-map-memory", "1"}},
    };
    for (const Case& c : cases) {
        const std::string file = dir.file("exporter.yaml", "metrics:\n" + c.metrics);
        std::vector<std::string> argv{tpkit::live::tool_path("tpkit-exporter"), "--config", file};
        argv.insert(argv.end(), c.options.begin(), c.options.end());
        std::vector<std::string> check = argv, start = argv;
        check.push_back("--config.check");
        start.insert(start.end(), {"--web.listen-address", "127.0.0.1:" + std::to_string(free_port())});
        ToolRun checked(check);
        EXPECT_EQ(checked.wait(tpkit::live::patient(10s)), c.exit)
            << c.what << ": " << checked.stderr_text();
        ToolRun started(start);
        EXPECT_EQ(started.wait(tpkit::live::patient(10s)), c.exit)
            << c.what << ": " << started.stderr_text();
        EXPECT_EQ(checked.stderr_text(), started.stderr_text()) << c.what;
        const std::string err = started.stderr_text();
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << c.what << ": " << err;
        EXPECT_EQ(err.rfind("tpkit-exporter: " + file + ": metric ", 0), 0u) << c.what << ": " << err;
    }
}

// yaml-cpp keeps a repeated key's every entry but finds only the first, and reads a file's
// documents one by one: a second value or document was ignored in silence. Refused by the
// check, at start and on reload (the running configuration stays), naming the line.
TEST(ExporterLive, RepeatedKeysAndSecondDocumentsAreRefused)
{
    TPKIT_REQUIRE_LIVE();
    TempDir dir;
    const std::string good = "metrics:\n  - name: switches\n    count: sched:sched_switch\n";
    const std::string forks = "  - name: forks\n    count: sched:sched_process_fork\n";
    struct Case {
        const char* what;
        std::string yaml;
        std::string message; // after the file's name
    };
    const std::vector<Case> cases = {
        {"metrics twice", good + "metrics:\n" + forks, ":4: key 'metrics': repeated (first on line 1)"},
        {"a key twice in a metric", good + "    count: sched:sched_process_fork\n",
         ":4: key 'count': repeated (first on line 3)"},
        {"a second document", good + "---\nmetrics:\n" + forks,
         ":5: a second YAML document (after '---'): the configuration is one document"},
    };
    for (const Case& c : cases) {
        const std::string file = dir.file("bad.yaml", c.yaml);
        const std::string expected = "tpkit-exporter: " + file + c.message + "\n";
        ToolRun checked({tpkit::live::tool_path("tpkit-exporter"), "--config", file, "--config.check"});
        EXPECT_EQ(checked.wait(tpkit::live::patient(10s)), 2) << c.what;
        EXPECT_EQ(checked.stderr_text(), expected) << c.what;
        ToolRun started({tpkit::live::tool_path("tpkit-exporter"), "--config", file,
                         "--web.listen-address", "127.0.0.1:" + std::to_string(free_port())});
        EXPECT_EQ(started.wait(tpkit::live::patient(10s)), 2) << c.what;
        EXPECT_EQ(started.stderr_text(), expected) << c.what;
    }

    const std::string config = dir.file("exporter.yaml", good);
    RunningExporter exporter(config);
    for (const Case& c : cases) {
        dir.file("exporter.yaml", c.yaml);
        EXPECT_EQ(exporter.reload(), false) << c.what;
        const std::string body = exporter.metrics();
        EXPECT_TRUE(sample(body, "tpkit_switches_total")) << c.what;
        EXPECT_FALSE(sample(body, "tpkit_forks_total")) << c.what;
        dir.file("exporter.yaml", good);
        ASSERT_EQ(exporter.reload(), true) << exporter.run().stderr_text();
    }
    EXPECT_EQ(exporter.run().stop(SIGTERM), 0);
    const std::string err = exporter.run().stderr_text();
    for (const Case& c : cases)
        EXPECT_NE(err.find("tpkit-exporter: " + config + c.message + " (the running configuration stays)\n"),
                  std::string::npos)
            << c.what << ": " << err;
}
