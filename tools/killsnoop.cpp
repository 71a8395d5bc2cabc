// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// killsnoop: the kill(), tkill() and tgkill() calls with their results — sigsnoop -k under the
// name bcc's users type, on sigsnoop's BPF program.
#include "sigsnoop.hpp"
#include "tpkit/run/tool.hpp"

namespace {

constexpr const char* examples = R"(  killsnoop                 # every kill(), tkill() and tgkill() call
  killsnoop -x              # only calls that failed
  killsnoop -p 181          # only calls made by process 181
  killsnoop --tpid 189      # only calls aimed at PID 189
  killsnoop -s 9,15         # only SIGKILL and SIGTERM
  killsnoop --json | jq .   # one JSON object per call
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("killsnoop",
                   "Trace kill(), tkill() and tgkill() calls: who signalled whom, and the result.",
                   examples);
    tpkit::sigsnoop::Options options;
    options.kill_calls = true;
    cli.add_common();
    cli.add_streaming();
    tpkit::sigsnoop::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] { tpkit::sigsnoop::run(cli, options); });
}
