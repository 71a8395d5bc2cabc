// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "server.hpp"

#include <tpkit/support/error.hpp>

#include <fmt/core.h>
#include <microhttpd.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace tpkit::exporter {

namespace {

// One event loop serves every connection: a connection that is idle, slow or stuck costs a
// descriptor and its buffer, never a thread, so it cannot make a scraper wait behind it.
// A connection with nothing sent or received for this long is closed.
constexpr unsigned idle_timeout_seconds = 5;
// A connection's buffer: its request line and headers must fit in it, with room for the answer's
// headers (a bigger request is answered 431, or closed, about 15 KiB on).
constexpr std::size_t connection_memory = 16 * 1024;
// Connections at once, and never more than half the open-file limit, which leaves the other
// half to the metrics' programs and maps. Beyond it, connections wait in the listen backlog.
constexpr unsigned max_connections = 4096;

constexpr const char* index_page = R"(<html><head><title>tpkit-exporter</title></head>
<body><h1>tpkit-exporter</h1><p><a href="/metrics">Metrics</a></p></body></html>
)";

// Raises the soft open-file limit to the hard one (idle connections take descriptors); how
// many connections to take at once.
unsigned connection_limit()
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return 64;
    if (limit.rlim_cur != limit.rlim_max) {
        rlimit raised{limit.rlim_max, limit.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            limit = raised;
    }
    const rlim_t half = limit.rlim_cur == RLIM_INFINITY ? max_connections : limit.rlim_cur / 2;
    return static_cast<unsigned>(std::clamp<rlim_t>(half, 1, max_connections));
}

// A listening socket on ADDRESS that no other socket shares: no SO_REUSEPORT, so a second
// exporter on the same address fails here instead of taking every other scrape.
int listen_exclusively(const std::string& address)
{
    const auto [host, port] = parse_listen_address(address);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (int err = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found))
        throw Error(Exit::failure, fmt::format("cannot listen on {}: {}", address,
                                               err == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(err)));
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
    int error = EADDRNOTAVAIL;
    for (const addrinfo* at = found; at; at = at->ai_next) {
        const int fd = socket(at->ai_family, at->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                              at->ai_protocol);
        if (fd < 0) {
            error = errno;
            continue;
        }
        // Lets a restart bind over its predecessor's TIME_WAIT connections; on Linux it does not
        // let two listening sockets share a port.
        const int on = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
        if (bind(fd, at->ai_addr, at->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0)
            return fd;
        error = errno;
        close(fd);
    }
    throw Error(Exit::failure, fmt::format("cannot listen on {}: {}", address,
                                           error == EADDRINUSE ? "address already in use"
                                                               : std::strerror(error)));
}

MHD_Result respond(MHD_Connection* connection, unsigned status, std::string_view body,
                   std::string_view content_type)
{
    MHD_Response* response = MHD_create_response_from_buffer(
        body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
    if (!response)
        return MHD_NO;
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, std::string(content_type).c_str());
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    const MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return queued;
}

// Called once the headers are in, then once the request has ended: what no path takes (another
// method, a body) is refused at once, its body unread and the connection closed after the
// answer; the rest is answered at the end, which keeps the connection alive for the next.
MHD_Result answer(void* exporter, MHD_Connection* connection, const char* url, const char* method,
                  const char*, const char*, size_t* upload_size, void** request)
{
    constexpr auto text = "text/plain; charset=utf-8";
    try {
        if (!*request) {
            if (std::strcmp(method, MHD_HTTP_METHOD_GET) != 0 && std::strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                return respond(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "405 method not allowed\n", text);
            const char* length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                             MHD_HTTP_HEADER_CONTENT_LENGTH);
            if ((length && std::strcmp(length, "0") != 0) ||
                MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
                return respond(connection, MHD_HTTP_CONTENT_TOO_LARGE, "413 a request has no body here\n", text);
            *request = connection;
            return MHD_YES;
        }
        if (*upload_size)
            return MHD_NO;
        const std::string_view path = url;
        if (path == "/metrics") {
            const char* accept = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                             MHD_HTTP_HEADER_ACCEPT);
            const auto format = negotiate_exposition(accept ? accept : "");
            return respond(connection, MHD_HTTP_OK, static_cast<Exporter*>(exporter)->scrape(format),
                           exposition_content_type(format));
        }
        if (path == "/")
            return respond(connection, MHD_HTTP_OK, index_page, "text/html");
        return respond(connection, MHD_HTTP_NOT_FOUND, "404 page not found\n", text);
    } catch (const std::exception& e) {
        return respond(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, std::string(e.what()) + "\n", text);
    }
}

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
    : exporter_(exporter), address_(address), listen_fd_(listen_exclusively(address))
{
    sockaddr_storage bound{};
    socklen_t size = sizeof(bound);
    if (parse_listen_address(address).second == 0 &&
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &size) == 0) {
        const auto port = ntohs(bound.ss_family == AF_INET6
                                    ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                                    : reinterpret_cast<const sockaddr_in&>(bound).sin_port);
        address_ = address.substr(0, address.rfind(':') + 1) + std::to_string(port);
    }
}

Server::~Server()
{
    stop();
    if (listen_fd_ >= 0)
        close(listen_fd_);
}

void Server::start()
{
    daemon_ = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, nullptr, nullptr, &answer, &exporter_,
        MHD_OPTION_LISTEN_SOCKET, listen_fd_, MHD_OPTION_CONNECTION_LIMIT, connection_limit(),
        MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        connection_memory, MHD_OPTION_END);
    if (!daemon_)
        throw Error(Exit::failure, fmt::format("cannot serve on {}", address_));
    listen_fd_ = -1; // the daemon closes it when it stops
}

void Server::stop()
{
    if (daemon_) {
        MHD_stop_daemon(daemon_);
        daemon_ = nullptr;
    }
}

} // namespace tpkit::exporter
