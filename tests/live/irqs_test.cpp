// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// softirqs and hardirqs against the kernel's own counters, /proc/softirqs and /proc/interrupts.
//
// A machine is never quiet: timers, RCU and devices fire softirqs and IRQs on every CPU all the
// time, so the tool's count cannot be compared with one /proc delta taken "around" it. It is
// bound exactly instead, by four snapshots:
//   A  before the tool starts        B  once its programs are attached
//   C  before it is stopped          D  after it exited (its programs detached)
// Every handler counted in /proc between B and C ran while the tool was attached, so the tool
// counted it: C - B <= tool. Every handler the tool counted ran after A and before D:
// tool <= D - A. For softirqs both bounds hold for every vector at once; a tool that counts one
// run too few or too many, under a wrong name, or on a wrong CPU, breaks one of them for some
// vector. The kernel counts a softirq or an IRQ once per handler run, just before the
// tracepoint at its entry, and the tool counts the runs whose entry and exit it saw. For hard
// IRQs only the upper bound holds for every name: the test's own device is held to the kernel's
// trace of its handler instead (see expect_hardirqs_bound).
//
// So that the comparison is not only over what happens to run, the test drives its own events
// between B and C, and requires them to be there (C - B > 0): NET_RX softirqs from a loopback
// storm in a private network namespace, on the one CPU the test pins itself to and the tool
// watches (-c); and the interrupts of a device that only the test uses (virtio-rng read
// through /dev/hwrng, or the RTC's update interrupt through /dev/rtc0), which nothing else on
// the machine provokes, so for that IRQ the count equals the runs of its handler.
#include "live.hpp"
#include "private_netns.hpp"
#include "tool_run.hpp"
#include "trace_instance.hpp"

#include <fcntl.h>
#include <linux/rtc.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr std::size_t softirqs_links = 2; // softirq_entry, softirq_exit
constexpr std::size_t hardirqs_links = 2; // irq_handler_entry, irq_handler_exit

// The loopback storm: datagrams of storm_payload bytes, each received (NET_RX softirqs).
constexpr std::size_t storm_payload = 100;
constexpr int storm_datagrams = 300;

// Counts by name, per CPU.
using Snapshot = std::map<std::string, std::vector<std::uint64_t>>;

int cpu_count()
{
    std::ifstream proc("/proc/softirqs");
    std::string header;
    std::getline(proc, header);
    std::istringstream words(header);
    int cpus = 0;
    for (std::string word; words >> word;)
        cpus++;
    return cpus;
}

// /proc/softirqs: "NET_RX:" → "net_rx", as softirqs names them.
Snapshot proc_softirqs()
{
    Snapshot counts;
    std::ifstream proc("/proc/softirqs");
    std::string line;
    std::getline(proc, line);
    while (std::getline(proc, line)) {
        std::istringstream words(line);
        std::string name;
        words >> name;
        name.pop_back(); // ':'
        for (char& c : name)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (std::uint64_t n; words >> n;)
            counts[name].push_back(n);
    }
    return counts;
}

// /proc/interrupts' numbered lines: each handler name (the last column, "a, b" for a shared
// line: every handler of the line runs at each of its interrupts) with the line's counts.
Snapshot proc_interrupts(int cpus)
{
    Snapshot counts;
    std::ifstream proc("/proc/interrupts");
    std::string line;
    std::getline(proc, line);
    while (std::getline(proc, line)) {
        std::istringstream words(line);
        std::string irq;
        words >> irq;
        if (irq.empty() || !std::isdigit(static_cast<unsigned char>(irq[0])))
            continue; // NMI, LOC, …: not handlers of irq_handler_entry
        std::vector<std::uint64_t> per_cpu(cpus);
        for (auto& n : per_cpu)
            words >> n;
        std::string chip, hwirq, names;
        words >> chip >> hwirq;
        std::getline(words >> std::ws, names);
        std::istringstream list(names);
        for (std::string name; std::getline(list >> std::ws, name, ',');) {
            auto& total = counts[name];
            total.resize(cpus);
            for (int cpu = 0; cpu < cpus; cpu++)
                total[cpu] += per_cpu[cpu];
        }
    }
    return counts;
}

std::uint64_t count_of(const Snapshot& snapshot, const std::string& name, int cpu)
{
    auto it = snapshot.find(name);
    if (it == snapshot.end())
        return 0;
    if (cpu >= 0)
        return it->second.at(cpu);
    std::uint64_t sum = 0;
    for (auto n : it->second)
        sum += n;
    return sum;
}

// Checks tool <= D - A for every name of the snapshots and of the tool's output, and C - B <=
// tool for those `exact` accepts, on `cpu` (or all of them, -1).
void expect_bound(const std::map<std::string, std::uint64_t>& tool, const Snapshot& a,
                  const Snapshot& b, const Snapshot& c, const Snapshot& d, int cpu,
                  const std::function<bool(const std::string&)>& exact)
{
    for (const auto& [name, counted] : tool)
        EXPECT_TRUE(d.count(name)) << name << " is counted, but not a name the kernel lists";
    for (const auto& [name, counts] : d) {
        auto it = tool.find(name);
        const std::uint64_t counted = it == tool.end() ? 0 : it->second;
        const std::uint64_t inner = count_of(c, name, cpu) - count_of(b, name, cpu);
        const std::uint64_t outer = count_of(d, name, cpu) - count_of(a, name, cpu);
        if (exact(name)) {
            EXPECT_LE(inner, counted) << name << ": the kernel counted more while attached";
        }
        EXPECT_LE(counted, outer) << name << ": more than the kernel counted at all";
    }
}

// Keeps this process (and the children it makes) on one CPU until destroyed.
class PinnedTo {
public:
    explicit PinnedTo(int cpu)
    {
        sched_getaffinity(0, sizeof(saved_), &saved_);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        pinned_ = sched_setaffinity(0, sizeof(one), &one) == 0;
    }
    ~PinnedTo() { sched_setaffinity(0, sizeof(saved_), &saved_); }
    bool pinned() const { return pinned_; }

private:
    cpu_set_t saved_{};
    bool pinned_ = false;
};

// The tool's rows ("softirq"/"hardirq" → "total_count"), or its histograms' totals with -d.
std::map<std::string, std::uint64_t> counts_printed(const ToolRun& tool, const std::string& label)
{
    std::map<std::string, std::uint64_t> counts;
    for (const auto& line : tool.lines()) {
        auto row = tpkit::live::parse_flat_json(line);
        if (row.count(label) && row.count("total_count"))
            counts[row[label]] += std::stoull(row["total_count"]);
        else if (row.count("key") && row.count("total"))
            counts[row["key"]] += std::stoull(row["total"]);
    }
    return counts;
}

void expect_softirqs_bound(const std::string& mode)
{
    TPKIT_REQUIRE_LIVE();
    const int cpus = cpu_count();
    ASSERT_GT(cpus, 0);
    const int cpu = cpus - 1;
    PinnedTo pin(cpu);
    ASSERT_TRUE(pin.pinned());
    tpkit::live::PrivateNetns ns;

    const Snapshot a = proc_softirqs();
    ToolRun tool({tpkit::live::tool_path("softirqs"), mode, "-c", std::to_string(cpu), "--json"});
    ASSERT_TRUE(tool.wait_until_attached(softirqs_links, 20s)) << tool.stderr_text();
    const Snapshot b = proc_softirqs();
    // The sender runs on `cpu`, and so do the NET_RX softirqs.
    ns.send_datagrams(storm_payload, storm_datagrams);
    const Snapshot c = proc_softirqs();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const Snapshot d = proc_softirqs();

    ASSERT_GT(count_of(c, "net_rx", cpu) - count_of(b, "net_rx", cpu), 0u)
        << "the loopback storm raised no NET_RX softirq on CPU " << cpu;
    expect_bound(counts_printed(tool, "softirq"), a, b, c, d, cpu,
                 [](const std::string&) { return true; });
}

// The device only this test uses: its IRQ's handler name, and how to make it interrupt.
struct TestDevice {
    std::string handler;
    std::function<void()> provoke;
};

// virtio-rng: every read the driver has no buffered bytes for asks the device, which answers
// with an interrupt. The kernel's own hwrng thread reads it only to reseed, minutes apart.
std::optional<TestDevice> virtio_rng()
{
    std::ifstream current("/sys/class/misc/hw_random/rng_current");
    std::string rng;
    if (!(current >> rng) || rng.rfind("virtio_rng", 0) != 0)
        return {};
    for (const auto& dev : std::filesystem::directory_iterator("/sys/bus/virtio/drivers/virtio_rng")) {
        const std::string name = dev.path().filename();
        if (name.rfind("virtio", 0) == 0)
            return TestDevice{name + "-input", [] {
                                  int fd = open("/dev/hwrng", O_RDONLY);
                                  char buf[4096];
                                  constexpr int reads = 8;
                                  for (int i = 0; fd >= 0 && i < reads; i++)
                                      ASSERT_GT(read(fd, buf, sizeof(buf)), 0);
                                  close(fd);
                              }};
    }
    return {};
}

// The RTC's update interrupt: on only while the test holds it on, one a second at least (more
// where an HPET emulates the RTC), each read waits for one.
std::optional<TestDevice> rtc()
{
    if (access("/dev/rtc0", R_OK) != 0)
        return {};
    return TestDevice{"rtc0", [] {
                          int fd = open("/dev/rtc0", O_RDONLY);
                          ASSERT_GE(fd, 0);
                          ASSERT_EQ(ioctl(fd, RTC_UIE_ON, 0), 0);
                          unsigned long data = 0;
                          constexpr int updates = 2;
                          for (int i = 0; i < updates; i++)
                              EXPECT_EQ(read(fd, &data, sizeof(data)),
                                        static_cast<ssize_t>(sizeof(data)));
                          ioctl(fd, RTC_UIE_OFF, 0);
                          close(fd);
                      }};
}

// The IRQ number of the /proc/interrupts line that lists `handler`; -1 when none does.
int irq_of(const std::string& handler)
{
    std::ifstream proc("/proc/interrupts");
    for (std::string line; std::getline(proc, line);)
        if (line.size() >= handler.size() &&
            line.compare(line.size() - handler.size(), handler.size(), handler) == 0)
            return std::atoi(line.c_str());
    return -1;
}

// The CPU of a line of the kernel's trace ("  <idle>-0  [001] d.h.. …").
int cpu_of_trace_line(const std::string& line)
{
    const auto open = line.find('[');
    return open == std::string::npos ? -1 : std::atoi(line.c_str() + open + 1);
}

// All CPUs, or with -c only `cpu`: the device's interrupts may land on another one, and the tool
// must not count them there (its count on `cpu` is bound like every other).
//
// For the device's handler, the oracle is the kernel's own trace of irq:irq_handler_exit
// (a private trace instance, filtered on its IRQ), switched on after B and off before C: inside
// the tool's window, and the device interrupts for nobody but the test, so the tool counts
// the runs the kernel traced, and none it did not. /proc's deltas are only an upper bound here:
// on the 6.18 host under load, BPF programs on these raw tracepoints missed some handler runs
// that the kernel counted and traced (seen: 497 and 510 of 512; libbpf-tools' hardirqs, run side
// by side, missed the same ones: 499 of 512; every run matched on 6.1), so the device's count
// may fall short of the trace by a tenth at most: a wrong handler, or runs counted twice or on
// the wrong CPU, still fail.
void expect_hardirqs_bound(int cpu)
{
    TPKIT_REQUIRE_LIVE();
    auto device = virtio_rng();
    if (!device)
        device = rtc();
    if (!device)
        GTEST_SKIP() << "no device only this test would make interrupt (virtio-rng, an RTC)";
    const std::string& handler = device->handler;
    const int irq = irq_of(handler);
    ASSERT_GE(irq, 0) << handler << " is not in /proc/interrupts";
    const int cpus = cpu_count();
    std::vector<std::string> argv{tpkit::live::tool_path("hardirqs"), "--count", "--json"};
    if (cpu >= 0)
        argv.insert(argv.end(), {"-s", std::to_string(cpu)});
    tpkit::live::TraceInstance trace("irqs");
    ASSERT_EQ(trace.set_filter("irq", "irq_handler_exit", "irq == " + std::to_string(irq)), "");

    const Snapshot a = proc_interrupts(cpus);
    ToolRun tool(argv);
    ASSERT_TRUE(tool.wait_until_attached(hardirqs_links, 20s)) << tool.stderr_text();
    const Snapshot b = proc_interrupts(cpus);
    trace.enable("irq", "irq_handler_exit", true);
    device->provoke();
    // The last read may leave a request in flight (virtio-rng refills its buffer): the trace
    // ends once the device has gone quiet.
    Snapshot c = proc_interrupts(cpus);
    for (auto quiet_until = std::chrono::steady_clock::now() + tpkit::live::patient(100ms),
              give_up = std::chrono::steady_clock::now() + tpkit::live::patient(5s);
         std::chrono::steady_clock::now() < quiet_until &&
         std::chrono::steady_clock::now() < give_up;) {
        std::this_thread::sleep_for(10ms);
        Snapshot now = proc_interrupts(cpus);
        if (count_of(now, handler, -1) != count_of(c, handler, -1))
            quiet_until = std::chrono::steady_clock::now() + tpkit::live::patient(100ms);
        c = std::move(now);
    }
    trace.enable("irq", "irq_handler_exit", false);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const Snapshot d = proc_interrupts(cpus);

    std::uint64_t traced = 0, traced_everywhere = 0;
    for (const auto& line : trace.take_lines()) {
        traced_everywhere++;
        if (cpu < 0 || cpu_of_trace_line(line) == cpu)
            traced++;
    }
    ASSERT_GT(traced_everywhere, 0u) << handler << " did not interrupt";
    const auto counted = counts_printed(tool, "hardirq");
    expect_bound(counted, a, b, c, d, cpu, [](const std::string&) { return false; });
    const std::uint64_t device_count = counted.count(handler) ? counted.at(handler) : 0;
    EXPECT_LE(device_count, traced) << handler;
    EXPECT_GE(device_count * 10, traced * 9) << handler << ": " << device_count << " of " << traced;
}

} // namespace

TEST(SoftirqsExact, CountsAreBoundByProcSoftirqsOnOneCpu) { expect_softirqs_bound("-C"); }

TEST(SoftirqsExact, HistogramTotalsAreBoundByProcSoftirqsOnOneCpu) { expect_softirqs_bound("-d"); }

// Times cannot be checked against the kernel's counters, but they are bound too: on one CPU,
// softirqs took no more time than passed, and the storm's NET_RX softirqs took some.
TEST(SoftirqsExact, TimesOnOneCpuFitInTheWindow)
{
    TPKIT_REQUIRE_LIVE();
    const int cpu = cpu_count() - 1;
    PinnedTo pin(cpu);
    ASSERT_TRUE(pin.pinned());
    tpkit::live::PrivateNetns ns;

    const auto start = std::chrono::steady_clock::now();
    ToolRun tool({tpkit::live::tool_path("softirqs"), "-N", "-c", std::to_string(cpu), "--json"});
    ASSERT_TRUE(tool.wait_until_attached(softirqs_links, 20s)) << tool.stderr_text();
    ns.send_datagrams(storm_payload, storm_datagrams);
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    const auto window = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start);

    std::uint64_t total = 0, net_rx = 0;
    for (const auto& line : tool.lines()) {
        auto row = tpkit::live::parse_flat_json(line);
        ASSERT_TRUE(row.count("softirq") && row.count("total_nsecs")) << line;
        total += std::stoull(row["total_nsecs"]);
        if (row["softirq"] == "net_rx")
            net_rx = std::stoull(row["total_nsecs"]);
    }
    EXPECT_GT(net_rx, 0u);
    EXPECT_LE(total, static_cast<std::uint64_t>(window.count()));
}

TEST(HardirqsExact, CountsAreBoundByProcInterrupts) { expect_hardirqs_bound(-1); }

TEST(HardirqsExact, CountsOnOneCpuAreBoundByProcInterrupts)
{
    expect_hardirqs_bound(cpu_count() - 1);
}
