// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// sigsnoop: every signal the kernel generates, who sent it to whom and what became of it, from
// signal:signal_generate; with -k, the kill(), tkill() and tgkill() calls and their results.
#include "sigsnoop.hpp"
#include "tpkit/run/tool.hpp"

namespace {

constexpr const char* examples = R"(  sigsnoop                  # every signal, system-wide
  sigsnoop -k               # only kill(), tkill() and tgkill() calls, with their results
  sigsnoop -x               # only signals not delivered (ignored, already pending, queue full)
  sigsnoop -k -x            # only failed kill calls
  sigsnoop -p 181           # only signals sent by process 181
  sigsnoop -s 9,TERM -n     # only SIGKILL and SIGTERM, shown by name
  sigsnoop --json | jq .    # one JSON object per signal
)";

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("sigsnoop", "Trace signals: who sent which signal to whom, and what became of it.",
                   examples);
    tpkit::sigsnoop::Options options;
    cli.add_common();
    cli.add_streaming();
    tpkit::sigsnoop::add_options(cli, options);
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    return tpkit::run_tool(cli.name(), [&] { tpkit::sigsnoop::run(cli, options); });
}
