// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpkit-exporter: in-kernel counts and histograms of any tracepoint, and the collectors of
// tpkit's tools, served to Prometheus; configured at run time, no compiler on the host.
#include "exporter/exporter.hpp"
#include "exporter/server.hpp"

#include <tpkit/cli/cli.hpp>
#include <tpkit/process/privileges.hpp>
#include <tpkit/process/stop.hpp>
#include <tpkit/run/tool.hpp>

#include <fmt/core.h>
#include <linux/capability.h>
#include <poll.h>
#include <sys/signalfd.h>

#include <unistd.h>

namespace {

constexpr const char* examples = R"(  tpkit-exporter --config /etc/tpkit/exporter.yaml
  tpkit-exporter --config exporter.yaml --config.check     # validate against this kernel, exit
  tpkit-exporter --config exporter.yaml --web.listen-address :9436
  kill -HUP $(pidof tpkit-exporter)                        # reload the configuration
)";

void drain(int fd)
{
    signalfd_siginfo info;
    while (read(fd, &info, sizeof(info)) == sizeof(info)) {
    }
}

void check(const std::string& path)
{
    auto config = tpkit::exporter::load_config(path);
    tpkit::exporter::check_config(config);
    fmt::print("{}: {} metrics, valid on this kernel\n", path, config.metrics.size());
}

void serve(const std::string& path, const std::string& address, int hup)
{
    using namespace tpkit::exporter;
    Exporter exporter;
    Server server(exporter, address);
    exporter.apply(load_config(path));
    // A reload loads and attaches programs, raises the fd limit for many events, and reads
    // tracefs, which as non-root takes CAP_DAC_READ_SEARCH (when the exporter was given it).
    tpkit::drop_privileges({CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE, CAP_DAC_READ_SEARCH});
    server.start();
    fmt::print(stderr, "tpkit-exporter: serving {} on http://{}/metrics\n", path, server.address());

    pollfd fds[] = {{tpkit::stop_signal_fd(), POLLIN, 0}, {hup, POLLIN, 0}};
    for (;;) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            throw tpkit::Error(tpkit::Exit::failure, std::string("poll: ") + std::strerror(errno));
        if (fds[0].revents)
            break;
        if (!fds[1].revents)
            continue;
        drain(hup);
        try {
            tpkit::EffectivePrivileges privileges;
            exporter.apply(load_config(path));
            fmt::print(stderr, "tpkit-exporter: reloaded {}\n", path);
        } catch (const std::exception& e) {
            // Whatever the new file holds, the running configuration keeps serving.
            exporter.reload_failed();
            fmt::print(stderr, "tpkit-exporter: {} (the running configuration stays)\n",
                       tpkit::one_line(e.what()));
        }
    }
    server.stop(); // then the exporter detaches everything
}

} // namespace

int main(int argc, char** argv)
{
    tpkit::Cli cli("tpkit-exporter",
                   "Serve in-kernel counts and histograms of tracepoints, and the collectors of "
                   "tpkit's tools, to Prometheus (/metrics). SIGHUP reloads the configuration.",
                   examples);
    std::string config;
    bool check_only = false;
    std::string address = "127.0.0.1:9436";
    cli.option("--config", config, "the metrics to serve (YAML)").required().complete("@file");
    cli.flag("--config.check", check_only,
             "check the configuration against this kernel and exit");
    cli.option("--web.listen-address", address, "where to serve (default 127.0.0.1:9436)");
    cli.add_map_memory(); // max_series sizes the maps
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);
    const int hup = tpkit::reload_signal_fd(); // before run_tool() takes the stop signals
    return tpkit::run_tool(cli.name(), [&] {
        if (check_only)
            check(config);
        else
            serve(config, address, hup);
    });
}
