// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The exporter's HTTP side: /metrics for Prometheus, hardened against clients that misbehave.
#pragma once

#include "exporter.hpp"

#include <string>

struct MHD_Daemon;

namespace tpkit::exporter {

// HOST:PORT, [IPV6]:PORT or :PORT (every address); Error(usage) otherwise.
std::pair<std::string, int> parse_listen_address(const std::string& address);

class Server {
public:
    // Binds now, exclusively (a busy port fails before anything is loaded, with Error(failure)
    // "… address already in use"); serves from start().
    Server(Exporter& exporter, const std::string& address);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    void start();
    void stop();
    // The address as given, with the port the kernel chose for port 0.
    const std::string& address() const { return address_; }

private:
    Exporter& exporter_;
    std::string address_;
    int listen_fd_ = -1; // owned until start() hands it to the daemon
    MHD_Daemon* daemon_ = nullptr;
};

} // namespace tpkit::exporter
