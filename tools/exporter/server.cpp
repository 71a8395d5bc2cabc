// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "server.hpp"

#include <tpkit/error.hpp>

#include <fmt/core.h>
#include <httplib.h>

#include <condition_variable>
#include <deque>

namespace tpkit::exporter {

namespace {

// Connections at once, each on its own thread: clients that hold a connection open (slow,
// idle, stuck) take one each and cannot make a scraper wait behind them until there are this
// many. Beyond it, connections wait in a queue.
constexpr std::size_t max_connection_threads = 128;
// Any one read or write of a connection, and an idle keep-alive connection, gives up after this.
constexpr time_t io_timeout_seconds = 5;
// Requests are GETs: a body is refused beyond this (headers: httplib's own 8 KiB limit).
constexpr std::size_t max_request_body = 4096;

// httplib's task queue with threads made on demand, at most max_connection_threads.
class ConnectionThreads : public httplib::TaskQueue {
public:
    void enqueue(std::function<void()> fn) override
    {
        std::lock_guard lock(mutex_);
        if (running_ < max_connection_threads) {
            running_++;
            std::thread([this, fn = std::move(fn)] { work(fn); }).detach();
        } else {
            waiting_.push_back(std::move(fn));
        }
    }

    void shutdown() override
    {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return running_ == 0; });
    }

private:
    void work(std::function<void()> fn)
    {
        for (;;) {
            fn();
            std::lock_guard lock(mutex_);
            if (waiting_.empty()) {
                running_--;
                done_.notify_all();
                return;
            }
            fn = std::move(waiting_.front());
            waiting_.pop_front();
        }
    }

    std::mutex mutex_;
    std::condition_variable done_;
    std::deque<std::function<void()>> waiting_;
    std::size_t running_ = 0;
};

constexpr const char* index_page = R"(<html><head><title>tpkit-exporter</title></head>
<body><h1>tpkit-exporter</h1><p><a href="/metrics">Metrics</a></p></body></html>
)";

} // namespace

std::pair<std::string, int> parse_listen_address(const std::string& address)
{
    const auto colon = address.rfind(':');
    std::string host = colon == std::string::npos ? "" : address.substr(0, colon);
    const std::string port = colon == std::string::npos ? "" : address.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    const bool digits = !port.empty() && port.size() <= 5 &&
                        port.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(port) > 65535)
        throw Error(Exit::usage,
                    fmt::format("bad --web.listen-address '{}': expected HOST:PORT", address));
    return {host.empty() ? "0.0.0.0" : host, std::stoi(port)};
}

Server::Server(Exporter& exporter, const std::string& address)
    : http_(std::make_unique<httplib::Server>())
{
    auto [host, port] = parse_listen_address(address);
    auto& http = *http_;
    http.new_task_queue = [] { return new ConnectionThreads; };
    http.set_read_timeout(io_timeout_seconds, 0);
    http.set_write_timeout(io_timeout_seconds, 0);
    http.set_keep_alive_timeout(io_timeout_seconds);
    http.set_keep_alive_max_count(100);
    http.set_payload_max_length(max_request_body);
    http.Get("/metrics", [&exporter](const httplib::Request& request, httplib::Response& response) {
        const auto format = negotiate_exposition(request.get_header_value("Accept"));
        response.set_content(exporter.scrape(format), std::string(exposition_content_type(format)));
    });
    http.Get("/", [](const httplib::Request&, httplib::Response& response) {
        response.set_content(index_page, "text/html");
    });
    if (!http.bind_to_port(host, port))
        throw Error(Exit::failure, fmt::format("cannot listen on {}: {}", address,
                                               std::strerror(errno ? errno : EADDRINUSE)));
}

Server::~Server()
{
    stop();
}

void Server::start()
{
    thread_ = std::thread([this] { http_->listen_after_bind(); });
}

void Server::stop()
{
    if (thread_.joinable()) {
        http_->stop();
        thread_.join();
    }
}

} // namespace tpkit::exporter
