// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A syscall's `const char *` arguments read as strings in BPF, on raw_syscalls (the default) and
// on the classic events (--classic): a child opens known paths (one that exists, one that does
// not, one longer than TPKIT_USER_STR_MAX, one with a quote and a newline in it, /etc/passwd)
// and a bad pointer; tpsnoop must show exactly those strings in its text, its -f view and its
// JSON, the long one cut and marked, the bad pointer as its address.
#include "live.hpp"
#include "marked_workload.hpp"
#include "tool_run.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ToolRun;

namespace {

constexpr const char* ustr_comm = "tpkit-ustr";
constexpr int rounds = 2;
constexpr std::size_t bound = 255; // TPKIT_USER_STR_MAX - 1 characters

const std::string existing = "/tmp/tpkit-str-exists";
const std::string missing = "/tmp/tpkit-str-missing";
const std::string quoted = "/tmp/tpkit-str-\"q\"\n";
const std::string passwd_path = "/etc/passwd";
// Longer than the bound: cut after its first 255 characters.
const std::string longer = "/tmp/tpkit-str-" + std::string(300, 'x');
const char* const bad_pointer = reinterpret_cast<const char*>(1);

// One round: each path opened once (raw syscalls only, in a forked child); 0 when each call
// failed or succeeded as it should.
int open_paths()
{
    long fd = syscall(SYS_openat, AT_FDCWD, existing.c_str(), O_RDONLY, 0);
    if (fd < 0)
        return 1;
    syscall(SYS_close, fd);
    if (syscall(SYS_openat, AT_FDCWD, missing.c_str(), O_RDONLY, 0) != -1 || errno != ENOENT)
        return 2;
    if (syscall(SYS_openat, AT_FDCWD, quoted.c_str(), O_RDONLY, 0) != -1 || errno != ENOENT)
        return 3;
    if (syscall(SYS_openat, AT_FDCWD, longer.c_str(), O_RDONLY, 0) != -1 || errno != ENAMETOOLONG)
        return 4;
    if (syscall(SYS_openat, AT_FDCWD, bad_pointer, O_RDONLY, 0) != -1 || errno != EFAULT)
        return 5;
    fd = syscall(SYS_openat, AT_FDCWD, passwd_path.c_str(), O_RDONLY, 0);
    if (fd < 0)
        return 6;
    syscall(SYS_close, fd);
    return 0;
}

// The paths a round opens, in order, as tpsnoop shows them.
const std::vector<std::string> shown_text{
    "\"/tmp/tpkit-str-exists\"", "\"/tmp/tpkit-str-missing\"", "\"/tmp/tpkit-str-\\\"q\\\"\\x0a\"",
    "\"" + longer.substr(0, bound) + "\"...", "0x1", "\"/etc/passwd\""};

// The paths opened on request, with the getppid marker; the existing path made for the test.
struct Workload : tpkit::live::MarkedWorkload {
    Workload() : MarkedWorkload(ustr_comm, open_paths) { make_existing(); }
    void make_existing()
    {
        int fd = open(existing.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
    }
    ~Workload() { unlink(existing.c_str()); }

    // The rounds, then SIGINT to TOOL: its lines of them, the marker's left out.
    std::vector<std::string> rounds_then_stop(ToolRun& tool)
    {
        auto before = MarkedWorkload::rounds_then_stop(tool, rounds);
        std::vector<std::string> lines;
        for (std::size_t i = before; i < tool.lines().size(); i++)
            if (tool.lines()[i].find("getppid") == std::string::npos)
                lines.push_back(tool.lines()[i]);
        return lines;
    }
};

std::vector<std::string> snoop(const std::vector<std::string>& options)
{
    Workload work;
    std::vector<std::string> argv{tpkit::live::tool_path("tpsnoop"), "syscalls:sys_enter_openat",
                                  "syscalls:sys_enter_getppid", "--comm", ustr_comm};
    argv.insert(argv.end(), options.begin(), options.end());
    ToolRun tool(argv);
    work.until_seen_by(tool);
    return work.rounds_then_stop(tool);
}

// What follows NEEDLE in LINE up to the next ", " or ")" (the kernel's form) or the end.
std::string value_after(const std::string& line, const std::string& needle, const std::string& ends)
{
    std::size_t at = line.find(needle);
    if (at == std::string::npos)
        return "(no " + needle + ")";
    at += needle.size();
    // A quoted value ends at its closing quote (and a "..." after it).
    if (line[at] == '"') {
        std::size_t i = at + 1;
        while (i < line.size() && line[i] != '"')
            i += line[i] == '\\' ? 2 : 1;
        i++;
        if (line.compare(i, 3, "...") == 0)
            i += 3;
        return line.substr(at, i - at);
    }
    return line.substr(at, line.find_first_of(ends, at) - at);
}

std::vector<std::string> expected_rounds(const std::vector<std::string>& round)
{
    std::vector<std::string> all;
    for (int i = 0; i < rounds; i++)
        all.insert(all.end(), round.begin(), round.end());
    return all;
}

class UserStringsLive : public testing::TestWithParam<bool> {
protected:
    std::vector<std::string> path_options() const
    {
        return GetParam() ? std::vector<std::string>{"--classic"} : std::vector<std::string>{};
    }
    std::vector<std::string> with_path(std::vector<std::string> options) const
    {
        auto path = path_options();
        options.insert(options.end(), path.begin(), path.end());
        return options;
    }
};

} // namespace

TEST_P(UserStringsLive, TextShowsTheStringsWhereTheKernelShowsAddresses)
{
    TPKIT_REQUIRE_LIVE();
    auto lines = snoop(path_options());
    std::vector<std::string> filenames;
    for (const auto& line : lines)
        filenames.push_back(value_after(line, "filename: ", ",)"));
    // The bad pointer as the kernel prints it: "1" (in hex before 6.18, below 10 in decimal on).
    auto expected = shown_text;
    std::replace(expected.begin(), expected.end(), std::string("0x1"), std::string("1"));
    EXPECT_EQ(filenames, expected_rounds(expected));
}

TEST_P(UserStringsLive, FieldsViewShowsTheStrings)
{
    TPKIT_REQUIRE_LIVE();
    // The --help example: tpsnoop syscalls:sys_enter_openat -f filename
    auto lines = snoop(with_path({"-f", "filename"}));
    std::vector<std::string> filenames;
    for (const auto& line : lines)
        filenames.push_back(value_after(line, "filename=", " "));
    EXPECT_EQ(filenames, expected_rounds(shown_text));
}

TEST_P(UserStringsLive, JsonHasThePointerAndTheString)
{
    TPKIT_REQUIRE_LIVE();
    auto all = snoop(with_path({"--json"}));
    std::vector<std::string> lines;
    std::copy_if(all.begin(), all.end(), std::back_inserter(lines),
                 [](const std::string& l) { return l.find("\"fields\"") != std::string::npos; });
    const std::vector<std::string> round{existing, missing, quoted, longer.substr(0, bound), "",
                                         passwd_path};
    const std::vector<const char*> pointers{existing.c_str(), missing.c_str(), quoted.c_str(),
                                            longer.c_str(), bad_pointer, passwd_path.c_str()};
    ASSERT_EQ(lines.size(), round.size() * rounds);
    for (std::size_t i = 0; i < lines.size(); i++) {
        auto fields = nlohmann::json::parse(lines[i]).at("fields");
        std::size_t k = i % round.size();
        char pointer[32];
        std::snprintf(pointer, sizeof(pointer), "0x%llx",
                      static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(pointers[k])));
        EXPECT_EQ(fields.at("filename"), pointer) << lines[i];
        if (pointers[k] == bad_pointer) {
            EXPECT_FALSE(fields.contains("filename_sym")) << lines[i];
            EXPECT_FALSE(fields.contains("filename_cut")) << lines[i];
            continue;
        }
        EXPECT_EQ(fields.value("filename_sym", "(none)"), round[k]) << lines[i];
        EXPECT_EQ(fields.contains("filename_cut"), pointers[k] == longer.c_str()) << lines[i];
        if (pointers[k] == longer.c_str()) {
            EXPECT_EQ(fields.at("filename_cut"), true);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(, UserStringsLive, testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Classic" : "RawSyscalls"; });
