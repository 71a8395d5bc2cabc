// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tphist's value arithmetic and --unit: reads of known sizes from this thread,
// measured as 'count*N' or 'count/N', land in the buckets of the scaled sizes,
// exactly; --unit converts only fields the event says are in nanoseconds.
#include "live.hpp"
#include "tool_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace
{

constexpr int read_fd = 777; // a descriptor no other reader of the test uses
// The reads read_histogram() makes: of 100 bytes, of 500.
constexpr std::uint64_t hundred_byte_reads = 5, five_hundred_byte_reads = 7;

// `times` reads of `size` bytes of /dev/zero on read_fd.
void read_zeros(std::size_t size, int times)
{
    std::vector<char> buffer(size);
    for (int i = 0; i < times; i++)
        ASSERT_EQ(read(read_fd, buffer.data(), size), static_cast<ssize_t>(size));
}

std::map<std::uint64_t, std::uint64_t> read_histogram(const std::string& value)
{
    int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    EXPECT_GE(zero, 0);
    EXPECT_EQ(dup3(zero, read_fd, O_CLOEXEC), read_fd);
    close(zero);
    const std::string tid = std::to_string(syscall(SYS_gettid));
    ToolRun tool({tpkit::live::tool_path("tphist"), "syscalls:sys_enter_read", value, "--json",
                  "--filter", "common_pid == " + tid + " && fd == " + std::to_string(read_fd)});
    constexpr std::size_t links = 1; // sys_enter_read
    EXPECT_TRUE(tool.wait_until_attached(links, 10s)) << tool.stderr_text();
    std::this_thread::sleep_for(100ms); // counting starts just after the attach
    read_zeros(100, hundred_byte_reads);
    read_zeros(500, five_hundred_byte_reads);
    EXPECT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();
    close(read_fd);
    return tpkit::live::histogram_buckets(tool.lines());
}

} // namespace

TEST(TphistExact, ValueTimesAConstant)
{
    TPKIT_REQUIRE_LIVE();
    // 100 * 1000 in [65536, 131071], 500 * 1000 in [262144, 524287].
    EXPECT_EQ(read_histogram("count*1000"),
              (std::map<std::uint64_t, std::uint64_t>{{65536, hundred_byte_reads},
                                                      {262144, five_hundred_byte_reads}}));
}

TEST(TphistExact, ValueDividedByAConstant)
{
    TPKIT_REQUIRE_LIVE();
    // 100 / 8 = 12 in [8, 15], 500 / 8 = 62 in [32, 63].
    EXPECT_EQ(read_histogram("count / 8"),
              (std::map<std::uint64_t, std::uint64_t>{{8, hundred_byte_reads},
                                                      {32, five_hundred_byte_reads}}));
}

TEST(TphistLive, UnitOnlyForFieldsInNanoseconds)
{
    TPKIT_REQUIRE_LIVE();
    ToolRun refused(
        {tpkit::live::tool_path("tphist"), "syscalls:sys_enter_read", "count", "--unit", "us"});
    EXPECT_EQ(refused.wait(10s), 2);
    EXPECT_EQ(refused.stderr_text(), "tphist: --unit us: syscalls:sys_enter_read does not say that "
                                     "'count' is in "
                                     "nanoseconds; scale it yourself ('count/1000')\n");
    // sched_stat_runtime prints "runtime=%Lu [ns]".
    ToolRun runtime({tpkit::live::tool_path("tphist"), "sched:sched_stat_runtime", "runtime",
                     "--unit", "us", "--json", "-d", "0.3"});
    EXPECT_EQ(runtime.wait(10s), 0) << runtime.stderr_text();
    ASSERT_FALSE(runtime.lines().empty());
    EXPECT_EQ(tpkit::live::parse_flat_json(runtime.lines().front())["unit"], "usecs");
    ToolRun bad({tpkit::live::tool_path("tphist"), "syscalls:sys_enter_read", "count*x"});
    EXPECT_EQ(bad.wait(10s), 2);
    EXPECT_NE(bad.stderr_text().find("expected FIELD, FIELD*N or FIELD/N"), std::string::npos)
        << bad.stderr_text();
}
