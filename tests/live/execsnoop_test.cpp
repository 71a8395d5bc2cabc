// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// execsnoop against real execs from known processes: exact argv (spaces, quotes, an argument cut,
// arguments past --max-args counted), failed execs only with -x, the text line as bcc shows it.
#include "live.hpp"
#include "scripted_child.hpp"
#include "tool_run.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tpkit::live::ScriptedChild;
using tpkit::live::ToolRun;

namespace {

// A directory holding "tpk-run me", a link to /bin/true (busybox's on the test VM), and the path
// of a file that does not exist; removed afterwards.
class ExecPaths {
public:
    ExecPaths()
    {
        dir_ = std::filesystem::temp_directory_path() / ("tpkit-execsnoop-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        program_ = (dir_ / "tpk-run me").string();
        missing_ = (dir_ / "tpk-missing").string();
        std::filesystem::create_symlink("/bin/true", program_);
    }
    ~ExecPaths()
    {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    const std::string& program() const { return program_; }
    const std::string& missing() const { return missing_; }

private:
    std::filesystem::path dir_;
    std::string program_, missing_;
};

// argv as execve takes it, pointing into `args`.
std::vector<char*> argv_of(std::vector<std::string>& args)
{
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    return argv;
}

// A process named `comm` that, when told, execs `path` with `argv` (and `first_path`, which must
// fail, before it, when given); exits with 0 when the exec ran /bin/true.
std::unique_ptr<ScriptedChild> exec_child(const std::string& comm, const std::string& path,
                                          std::vector<char*>& argv, const char* first_path = nullptr)
{
    const char* file = path.c_str();
    char* const* args = argv.data();
    return std::make_unique<ScriptedChild>(comm, std::function<int()>{}, [=] {
        char* const env[] = {nullptr};
        if (first_path && execve(first_path, args, env) == 0)
            return 1;
        execve(file, args, env);
        return 2;
    });
}

// The events of `pid` in a tool's --json output.
std::vector<nlohmann::json> events_of(const ToolRun& tool, pid_t pid)
{
    std::vector<nlohmann::json> events;
    for (const auto& line : tool.lines()) {
        auto e = nlohmann::json::parse(line, nullptr, false);
        if (e.is_object() && e.contains("pid") && e["pid"] == pid)
            events.push_back(e);
    }
    return events;
}

bool has_line_of(const std::string& line, pid_t pid, int ret)
{
    auto e = nlohmann::json::parse(line, nullptr, false);
    return e.is_object() && e.contains("pid") && e["pid"] == pid && e["ret"] == ret;
}

constexpr std::size_t execsnoop_links = 4;  // sys_enter_ and sys_exit_ of execve and execveat
constexpr std::size_t arg_bytes_kept = 255; // of each argument; a longer one is cut

} // namespace

TEST(ExecsnoopExact, ArgvExactFailedExecsOnlyWithX)
{
    TPKIT_REQUIRE_LIVE();
    ExecPaths paths;
    // Spaces, quotes and a backslash; an argument that fits and one that is cut; more arguments
    // than --max-args.
    constexpr std::size_t max_args = 5;
    std::vector<std::string> quoted{"true", "with space", "say \"hi\"", "it's", "back\\slash"};
    std::vector<std::string> long_args{"true", std::string(arg_bytes_kept, 'f'), std::string(300, 'c'),
                                       "d", "e", "f"};
    auto quoted_argv = argv_of(quoted), long_argv = argv_of(long_args);
    auto a = exec_child("tpk-exec-a", paths.program(), quoted_argv, paths.missing().c_str());
    auto b = exec_child("tpk-exec-b", paths.program(), long_argv);

    const std::vector<std::string> args{"--json", "--max-args", std::to_string(max_args)};
    auto argv = [&](std::vector<std::string> extra) {
        extra.insert(extra.begin(), tpkit::live::tool_path("execsnoop"));
        extra.insert(extra.end(), args.begin(), args.end());
        return extra;
    };
    ToolRun with_failed(argv({"-x"})), successful_only(argv({}));
    ASSERT_TRUE(with_failed.wait_until_attached(execsnoop_links, 20s)) << with_failed.stderr_text();
    ASSERT_TRUE(successful_only.wait_until_attached(execsnoop_links, 20s))
        << successful_only.stderr_text();
    ASSERT_EQ(a->go_and_wait(), 0);
    ASSERT_EQ(b->go_and_wait(), 0);
    for (ToolRun* tool : {&with_failed, &successful_only}) {
        ASSERT_TRUE(tool->wait_for_line([&](const std::string& l) { return has_line_of(l, b->pid(), 0); }, 20s))
            << tool->stderr_text();
        ASSERT_EQ(tool->stop(SIGINT), 0) << tool->stderr_text();
        EXPECT_EQ(tool->lines().back(), "{\"type\":\"lost\",\"lost_events\":0}");
    }

    // a: the failed exec (with -x only), then the successful one, whose comm is the new program's.
    const nlohmann::json quoted_json = quoted;
    auto failed_a = events_of(with_failed, a->pid());
    ASSERT_EQ(failed_a.size(), 2u);
    EXPECT_EQ(failed_a[0]["ret"], -ENOENT);
    EXPECT_EQ(failed_a[0]["pcomm"], "tpk-exec-a");
    EXPECT_EQ(failed_a[0]["filename"], paths.missing());
    EXPECT_EQ(failed_a[0]["args"], quoted_json);
    EXPECT_EQ(failed_a[1]["ret"], 0);
    EXPECT_EQ(failed_a[1]["pcomm"], "tpk-run me");
    auto done_a = events_of(successful_only, a->pid());
    ASSERT_EQ(done_a.size(), 1u);
    for (const auto& e : {failed_a[1], done_a[0]}) {
        EXPECT_EQ(e["ret"], 0);
        EXPECT_EQ(e["pcomm"], "tpk-run me");
        EXPECT_EQ(e["filename"], paths.program());
        EXPECT_EQ(e["filename_cut"], 0);
        EXPECT_EQ(e["args"], quoted_json);
        EXPECT_EQ(e["argc"], quoted.size());
        EXPECT_EQ(e["args_cut"], 0);
        EXPECT_EQ(e["ppid"], getpid());
        EXPECT_EQ(e["tid"], a->pid());
        EXPECT_EQ(e["call"], "execve");
    }

    // b: max_args arguments read of more, the third cut.
    for (ToolRun* tool : {&with_failed, &successful_only}) {
        auto events = events_of(*tool, b->pid());
        ASSERT_EQ(events.size(), 1u);
        const nlohmann::json expected_args = std::vector<std::string>{
            "true", std::string(arg_bytes_kept, 'f'), std::string(arg_bytes_kept, 'c'), "d", "e"};
        ASSERT_EQ(expected_args.size(), max_args);
        EXPECT_EQ(events[0]["args"], expected_args);
        EXPECT_EQ(events[0]["argc"], long_args.size());
        EXPECT_EQ(events[0]["args_cut"], 1);
        EXPECT_EQ(events[0]["ret"], 0);
    }
}

TEST(ExecsnoopExact, TextLineQuotesArgumentsAndMarksWhatIsCut)
{
    TPKIT_REQUIRE_LIVE();
    ExecPaths paths;
    constexpr std::size_t max_args = 5; // all but "past"
    std::vector<std::string> args{"true", "tpk-line-token", "two words", "q\"uote", std::string(300, 'x'),
                                  "past"};
    auto argv = argv_of(args);
    auto child = exec_child("tpk-exec-text", paths.program(), argv);
    // -l keeps only this exec: the whole output is known.
    ToolRun tool({tpkit::live::tool_path("execsnoop"), "-q", "-U", "--max-args", std::to_string(max_args),
                  "-l", "tpk-line-token"});
    ASSERT_TRUE(tool.wait_until_attached(execsnoop_links, 20s)) << tool.stderr_text();
    ASSERT_EQ(child->go_and_wait(), 0);
    const std::string pid = std::to_string(child->pid());
    ASSERT_TRUE(tool.wait_for_line(
        [&](const std::string& l) { return l.find(" " + pid + " ") != std::string::npos; }, 20s))
        << tool.stderr_text();
    ASSERT_EQ(tool.stop(SIGINT), 0) << tool.stderr_text();

    const auto& lines = tool.lines();
    ASSERT_EQ(lines.size(), 2u) << tool.stderr_text(); // the header, the exec
    EXPECT_EQ(lines[0], "TIME     UID    PCOMM                PID    PPID RET ARGS");
    // The filename for argv[0], as bcc shows it; the cut argument and the missing one marked.
    const std::string expected = fmt::format(
        "0      tpk-run me       {:>7} {:>7}   0 \"{}\" \"tpk-line-token\" \"two words\" \"q\\\"uote\" "
        "\"{}…\" …",
        pid, getpid(), paths.program(), std::string(arg_bytes_kept, 'x'));
    const std::size_t time_width = std::string("HH:MM:SS ").size();
    ASSERT_GT(lines[1].size(), time_width);
    EXPECT_EQ(lines[1].substr(time_width), expected);
}
