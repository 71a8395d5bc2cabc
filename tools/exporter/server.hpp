// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The exporter's HTTP side: /metrics for Prometheus, hardened against clients that misbehave.
#pragma once

#include "exporter.hpp"

#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace tpkit::exporter {

// HOST:PORT, [IPV6]:PORT or :PORT (every address); Error(usage) otherwise.
std::pair<std::string, int> parse_listen_address(const std::string& address);

class Server {
public:
    // Binds now (a busy port fails before anything is loaded); serves from start().
    Server(Exporter& exporter, const std::string& address);
    ~Server();

    void start();
    void stop();

private:
    std::unique_ptr<httplib::Server> http_;
    std::thread thread_;
};

} // namespace tpkit::exporter
